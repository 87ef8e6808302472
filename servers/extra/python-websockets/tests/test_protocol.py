import json
import unittest

from chat.limiter import Limiter
from chat.protocol import encode_chat, encode_pong, parse_inbound


class ProtocolTest(unittest.TestCase):
    def test_a_valid_join_chat_ping_and_leave_are_parsed(self):
        join = parse_inbound('{"type":"join","room":"public","user":"alice"}')
        self.assertEqual((join.room, join.user), ("public", "alice"))
        chat = parse_inbound('{"type":"chat","room":"lobby","text":"hi","ts":12.5}')
        self.assertEqual((chat.kind, chat.room, chat.text, chat.ts), ("chat", "lobby", "hi", 12.5))
        self.assertIsNone(parse_inbound('{"type":"ping"}').ts)
        leave = parse_inbound('{"type":"leave"}')
        self.assertEqual((leave.kind, leave.room), ("leave", None))
        self.assertEqual(parse_inbound('{"type":"leave","room":"lobby"}').room, "lobby")

    def test_a_room_or_user_of_64_characters_counts_code_points(self):
        name, long = "\U0001F600" * 64, "\U0001F600" * 65
        self.assertEqual(parse_inbound(json.dumps({"type": "join", "room": name, "user": name})).room, name)
        self.assertIsNone(parse_inbound(json.dumps({"type": "join", "room": long, "user": "a"})))
        self.assertIsNone(parse_inbound(json.dumps({"type": "join", "room": "r", "user": long})))

    def test_every_kind_of_invalid_input_the_protocol_lists_is_refused(self):
        for bad in [
            "not json",
            "[1,2]",
            "null",
            "{}",
            '{"type":"shout"}',
            '{"type":"join","room":"public","user":""}',
            '{"type":"join","room":"public","user":"%s"}' % ("x" * 65),
            '{"type":"join","user":"a"}',
            '{"type":"join","room":"","user":"a"}',
            '{"type":"join","room":"%s","user":"a"}' % ("r" * 65),
            '{"type":"join","room":7,"user":"a"}',
            '{"type":"chat","text":"a"}',
            '{"type":"chat","room":"","text":"a"}',
            '{"type":"leave","room":""}',
            '{"type":"leave","room":null}',
            '{"type":"chat","room":"public","text":5}',
            '{"type":"chat","room":"public","text":"a","ts":"x"}',
            '{"type":"chat","room":"public","text":"a","ts":true}',
            '{"type":"chat","room":"public","text":"a","ts":NaN}',
            '{"type":"chat","room":"public"}',
        ]:
            self.assertIsNone(parse_inbound(bad), bad)

    def test_a_chat_without_ts_is_broadcast_without_ts_and_a_pong_echoes_ts(self):
        self.assertEqual(
            json.loads(encode_chat("public", "a", "hi", None)), {"type": "chat", "room": "public", "user": "a", "text": "hi"}
        )
        self.assertEqual(encode_pong(42.5), b'{"type":"pong","ts":42.5}')

    def test_a_lone_surrogate_is_sent_escaped_rather_than_failing(self):
        msg = parse_inbound('{"type":"chat","room":"public","text":"\\ud800"}')
        self.assertEqual(json.loads(encode_chat("public", "a", msg.text, None))["text"], "\ud800")

    def test_the_bucket_starts_full_with_10_tokens_and_refills_at_10_per_second(self):
        now = [0.0]
        limiter = Limiter(lambda: now[0])
        self.assertTrue(all(limiter.allow() for _ in range(10)))
        self.assertFalse(limiter.allow())
        now[0] += 0.1
        self.assertTrue(limiter.allow())
        self.assertFalse(limiter.allow())
        now[0] += 60
        self.assertEqual(sum(limiter.allow() for _ in range(12)), 10)


if __name__ == "__main__":
    unittest.main()
