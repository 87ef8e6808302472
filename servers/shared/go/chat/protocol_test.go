package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseInboundAcceptsValidMessages(t *testing.T) {
	cases := []struct {
		in   string
		want inbound
	}{
		{`{"type":"join","room":"public","user":"alice"}`, inbound{kind: kindJoin, room: "public", user: "alice"}},
		{`{"type":"join","room":"public","user":"` + strings.Repeat("é", 64) + `"}`, inbound{kind: kindJoin, room: "public", user: strings.Repeat("é", 64)}},
		{`{"type":"join","room":"` + strings.Repeat("界", 64) + `","user":"a"}`, inbound{kind: kindJoin, room: strings.Repeat("界", 64), user: "a"}},
		{`{"type":"join","room":"x","user":"a"}`, inbound{kind: kindJoin, room: "x", user: "a"}},
		{`{"type":"chat","room":"public","text":"hello","ts":1732233445566.25}`, inbound{kind: kindChat, room: "public", text: "hello", ts: json.RawMessage("1732233445566.25")}},
		{`{"type":"chat","room":"public","text":""}`, inbound{kind: kindChat, room: "public"}},
		{`{"type":"chat","room":"lobby","text":"x","ts":-1.5e+3}`, inbound{kind: kindChat, room: "lobby", text: "x", ts: json.RawMessage("-1.5e+3")}},
		{`{"type":"ping","ts":1732233445566}`, inbound{kind: kindPing, ts: json.RawMessage("1732233445566")}},
		{`{"type":"ping"}`, inbound{kind: kindPing}},
		{`{"type":"leave"}`, inbound{kind: kindLeave}},
		{`{"type":"leave","room":"elsewhere"}`, inbound{kind: kindLeave, room: "elsewhere"}},
		{`{"type":"chat","room":"public","text":"x","extra":[1,2]}`, inbound{kind: kindChat, room: "public", text: "x"}},
	}
	for _, c := range cases {
		got, err := parseInbound([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got.kind != c.want.kind || got.room != c.want.room || got.user != c.want.user || got.text != c.want.text || string(got.ts) != string(c.want.ts) {
			t.Errorf("%s: got %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseInboundRejectsInvalidInput(t *testing.T) {
	for _, in := range []string{
		``,
		`not json`,
		`{"type":"chat","room":"public","text":"x"`,
		`[1,2]`,
		`"join"`,
		`null`,
		`{}`,
		`{"type":null}`,
		`{"type":7}`,
		`{"type":"shout"}`,
		`{"type":"join","room":"public"}`,
		`{"type":"join","room":"public","user":""}`,
		`{"type":"join","room":"public","user":"` + strings.Repeat("é", 65) + `"}`,
		`{"type":"join","room":"public","user":42}`,
		`{"type":"join","user":"alice"}`,
		`{"type":"join","room":"","user":"alice"}`,
		`{"type":"join","room":"` + strings.Repeat("界", 65) + `","user":"alice"}`,
		`{"type":"join","room":5,"user":"alice"}`,
		`{"type":"join","room":null,"user":"alice"}`,
		`{"type":"chat","room":"public"}`,
		`{"type":"chat","room":"public","text":5}`,
		`{"type":"chat","text":"x"}`,
		`{"type":"chat","room":"","text":"x"}`,
		`{"type":"chat","room":["public"],"text":"x"}`,
		`{"type":"chat","room":"public","text":"x","ts":"1"}`,
		`{"type":"chat","room":"public","text":"x","ts":null}`,
		`{"type":"ping","ts":"soon"}`,
		`{"type":"ping","ts":[1]}`,
		`{"type":"leave","room":1}`,
		`{"type":"leave","room":""}`,
		`{"type":"leave","room":"` + strings.Repeat("x", 65) + `"}`,
	} {
		if got, err := parseInbound([]byte(in)); err == nil {
			t.Errorf("%s: accepted as %+v", in, got)
		}
	}
}

func TestBroadcastsMatchTheProtocol(t *testing.T) {
	cases := []struct{ got, want string }{
		{string(encodeJoin("public", "alice", 3)), `{"type":"join","room":"public","user":"alice","online":3}`},
		{string(encodeLeave("lobby", "alice", 2)), `{"type":"leave","room":"lobby","user":"alice","online":2}`},
		{string(encodeChat("public", "alice", "hello", json.RawMessage("1732233445566.25"))), `{"type":"chat","room":"public","user":"alice","text":"hello","ts":1732233445566.25}`},
		{string(encodeChat("public", "alice", "hello", nil)), `{"type":"chat","room":"public","user":"alice","text":"hello"}`},
		{string(encodeChat("a<b>\"", "a\"b", "<&>\n", nil)), `{"type":"chat","room":"a<b>\"","user":"a\"b","text":"<&>\n"}`},
		{string(encodePong(json.RawMessage("1732233445566"))), `{"type":"pong","ts":1732233445566}`},
		{string(encodePong(nil)), `{"type":"pong"}`},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
}

func TestChatTimestampEchoesItsTextUnchanged(t *testing.T) {
	for _, ts := range []string{"1732233445566.25", "1e3", "0.10", "-0", "123456789012345678901234567890"} {
		msg, err := parseInbound([]byte(`{"type":"chat","room":"public","text":"x","ts":` + ts + `}`))
		if err != nil {
			t.Fatalf("ts %s: %v", ts, err)
		}
		want := `{"type":"chat","room":"public","user":"u","text":"x","ts":` + ts + `}`
		if got := string(encodeChat(msg.room, "u", msg.text, msg.ts)); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}
