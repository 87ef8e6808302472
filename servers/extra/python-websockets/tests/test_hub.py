import json
import unittest

from chat.hub import MAX_ROOMS, QUEUE_SIZE, Hub, Member
from chat.stats import Stats


def joined(hub, user, room="public"):
    member = Member(hub)
    hub.register(member)
    member.handle(json.dumps({"type": "join", "room": room, "user": user}))
    return member


def drain(member):
    """What a writer would send, as parsed JSON, counting deliveries as the writer does."""
    sent = []
    while member.queue:
        out = member.queue.popleft()
        if out.chat:
            member.hub.stats.deliveries += 1
        sent.append(json.loads(out.data))
    return sent


class HubTest(unittest.TestCase):
    def test_a_join_is_broadcast_to_every_member_the_joiner_included(self):
        hub = Hub(Stats("t"))
        a = joined(hub, "a")
        b = joined(hub, "b")
        self.assertEqual([(m["user"], m["online"]) for m in drain(a)], [("a", 1), ("b", 2)])
        self.assertEqual([(m["user"], m["online"]) for m in drain(b)], [("b", 2)])
        self.assertEqual(hub.stats.joins, 2)

    def test_a_chat_reaches_the_others_but_not_the_sender(self):
        hub = Hub(Stats("t"))
        a, b, c = (joined(hub, u) for u in "abc")
        for m in (a, b, c):
            drain(m)
        a.handle('{"type":"chat","room":"public","text":"hi","ts":7}')
        self.assertEqual(drain(a), [])
        self.assertEqual(drain(b), [{"type": "chat", "room": "public", "user": "a", "text": "hi", "ts": 7}])
        self.assertEqual(len(drain(c)), 1)
        self.assertEqual(hub.stats.deliveries, 2)

    def test_chat_or_leave_before_join_is_malformed_and_a_second_join_is_ignored(self):
        hub = Hub(Stats("t"))
        m = Member(hub)
        m.handle('{"type":"chat","room":"public","text":"x"}')
        m.handle('{"type":"leave"}')
        self.assertEqual(hub.stats.malformed, 2)
        m.handle('{"type":"join","room":"public","user":"a"}')
        m.handle('{"type":"join","room":"public","user":"b"}')
        self.assertEqual((hub.stats.joins, hub.stats.malformed), (1, 2))

    def test_a_full_queue_of_256_drops_further_messages_in_dropped_slow(self):
        hub = Hub(Stats("t"))
        sender = joined(hub, "sender")
        sender.limiter.allow = lambda: True
        slow = joined(hub, "slow")
        drain(slow)
        for i in range(QUEUE_SIZE + 50):
            sender.handle(json.dumps({"type": "chat", "room": "public", "text": str(i)}))
        self.assertEqual(len(slow.queue), QUEUE_SIZE)
        self.assertEqual(hub.stats.dropped_slow, 50)

    def test_the_rate_limit_drops_the_eleventh_chat_of_a_burst(self):
        hub = Hub(Stats("t"))
        a = joined(hub, "a")
        joined(hub, "b")
        for _ in range(11):
            a.handle('{"type":"chat","room":"public","text":"x"}')
        self.assertEqual((hub.stats.chat_in, hub.stats.chat_accepted, hub.stats.dropped_ratelimit), (11, 10, 1))

    def test_a_leave_is_broadcast_to_the_remaining_members_and_closes_with_1000(self):
        hub = Hub(Stats("t"))
        a = joined(hub, "a")
        b = joined(hub, "b")
        drain(b)
        a.handle('{"type":"leave"}')
        self.assertEqual(a.close_code, 1000)
        self.assertEqual(drain(b), [{"type": "leave", "room": "public", "user": "a", "online": 1}])
        hub.unregister(a)
        self.assertEqual(drain(b), [])

    def test_a_join_and_a_chat_reach_their_own_room_only_and_online_counts_that_room(self):
        hub = Hub(Stats("t"))
        a = joined(hub, "a", "r1")
        b = joined(hub, "b", "r2")
        c = joined(hub, "c", "r1")
        self.assertEqual(drain(b), [{"type": "join", "room": "r2", "user": "b", "online": 1}])
        self.assertEqual(drain(c), [{"type": "join", "room": "r1", "user": "c", "online": 2}])
        drain(a)
        a.handle('{"type":"chat","room":"r1","text":"hi"}')
        self.assertEqual(drain(c), [{"type": "chat", "room": "r1", "user": "a", "text": "hi"}])
        self.assertEqual(drain(b), [])
        # a joins r2 as well, under another claimed name: the broadcast keeps its first name.
        a.handle('{"type":"join","room":"r2","user":"other"}')
        self.assertEqual(drain(b), [{"type": "join", "room": "r2", "user": "a", "online": 2}])
        self.assertEqual(drain(c), [])

    def test_a_leave_with_a_room_leaves_that_room_only_and_keeps_the_connection_open(self):
        hub = Hub(Stats("t"))
        a = joined(hub, "a", "r1")
        b = joined(hub, "b", "r1")
        c = joined(hub, "c", "r2")
        a.handle('{"type":"join","room":"r2","user":"a"}')
        for m in (a, b, c):
            drain(m)
        a.handle('{"type":"leave","room":"r1"}')
        self.assertIsNone(a.close_code)
        self.assertEqual(drain(b), [{"type": "leave", "room": "r1", "user": "a", "online": 1}])
        a.handle('{"type":"chat","room":"r1","text":"gone"}')
        a.handle('{"type":"leave","room":"r1"}')
        self.assertEqual(hub.stats.malformed, 2)
        c.handle('{"type":"chat","room":"r2","text":"still"}')
        self.assertEqual(drain(a), [{"type": "chat", "room": "r2", "user": "c", "text": "still"}])
        a.handle('{"type":"leave"}')
        self.assertEqual(a.close_code, 1000)
        self.assertEqual(drain(c), [{"type": "leave", "room": "r2", "user": "a", "online": 1}])

    def test_a_second_join_to_a_room_is_ignored_and_a_join_to_a_17th_room_is_malformed(self):
        hub = Hub(Stats("t"))
        a = joined(hub, "a", "r0")
        a.handle('{"type":"join","room":"r0","user":"a"}')
        self.assertEqual((hub.stats.joins, hub.stats.malformed), (1, 0))
        for i in range(1, MAX_ROOMS + 1):
            a.handle(json.dumps({"type": "join", "room": f"r{i}", "user": "a"}))
        self.assertEqual(len(a.rooms), MAX_ROOMS)
        self.assertEqual((hub.stats.joins, hub.stats.malformed), (MAX_ROOMS, 1))
        self.assertNotIn(f"r{MAX_ROOMS}", hub.rooms)

    def test_a_disconnect_leaves_every_room_and_an_emptied_room_is_forgotten(self):
        hub = Hub(Stats("t"))
        a = joined(hub, "a", "r1")
        a.handle('{"type":"join","room":"r2","user":"a"}')
        b = joined(hub, "b", "r1")
        c = joined(hub, "c", "r2")
        drain(b)
        drain(c)
        hub.unregister(a)
        self.assertEqual(drain(b), [{"type": "leave", "room": "r1", "user": "a", "online": 1}])
        self.assertEqual(drain(c), [{"type": "leave", "room": "r2", "user": "a", "online": 1}])
        hub.unregister(b)
        hub.unregister(c)
        self.assertEqual(hub.rooms, {})


if __name__ == "__main__":
    unittest.main()
