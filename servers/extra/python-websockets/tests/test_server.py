import asyncio
import json
import os
import sys
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "vendor"))

from websockets.asyncio.client import connect  # noqa: E402

import server  # noqa: E402
from chat.hub import Hub  # noqa: E402
from chat.stats import Stats  # noqa: E402


class ServerTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.hub = Hub(Stats(server.SERVER_TAG))
        self.server = await server.start(self.hub, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def asyncTearDown(self):
        self.server.close()
        await self.server.wait_closed()

    def get(self, path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}") as r:
                return r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as e:
            return e.code, None, b""

    async def test_health_stats_and_404_answer_over_http(self):
        status, _, body = await asyncio.to_thread(self.get, "/health")
        self.assertEqual((status, body), (200, b"ok"))
        status, kind, body = await asyncio.to_thread(self.get, "/stats")
        self.assertEqual((status, kind, json.loads(body)["server"]), (200, "application/json", server.SERVER_TAG))
        self.assertEqual((await asyncio.to_thread(self.get, "/nope"))[0], 404)

    async def test_a_join_is_acknowledged_and_a_message_over_4096_bytes_closes_with_1009(self):
        async with connect(f"ws://127.0.0.1:{self.port}/ws", max_size=None) as ws:
            await ws.send('{"type":"join","room":"public","user":"alice"}')
            self.assertEqual(json.loads(await ws.recv()), {"type": "join", "room": "public", "user": "alice", "online": 1})
            await ws.send("x" * 4097)
            await ws.wait_closed()
            self.assertEqual(ws.close_code, 1009)
        await asyncio.sleep(0.05)
        self.assertEqual(self.hub.stats.connections_current, 0)


if __name__ == "__main__":
    unittest.main()
