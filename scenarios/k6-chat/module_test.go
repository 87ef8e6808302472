package chat

import (
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"
)

func parseJS(t *testing.T, src string) (clientOptions, int, error) {
	t.Helper()
	rt := sobek.New()
	v, err := rt.RunString("(" + src + ")")
	if err != nil {
		t.Fatal(err)
	}
	return parseOptions(rt, v)
}

func TestOptionsAsTheScriptsPassThem(t *testing.T) {
	o, clients, err := parseJS(t, `{url: "ws://127.0.0.1:1/ws", user: "k6-1-0", chatsPerSecond: 5,
		stopChatAt: 1763900000123.5, leaveAt: 1763900001123, clients: 3}`)
	if err != nil {
		t.Fatal(err)
	}
	if clients != 3 || o.user != "k6-1-0" || o.chatsPerSecond != 5 || o.hasStay {
		t.Errorf("parsed %+v, clients %d", o, clients)
	}
	if !o.stopChatAt.Equal(time.UnixMicro(1763900000123500)) || !o.leaveAt.Equal(time.UnixMilli(1763900001123)) {
		t.Errorf("times %v %v", o.stopChatAt, o.leaveAt)
	}
	o, _, err = parseJS(t, `{url: "ws://h/ws", user: "u", chats: 1, stayMs: 2000, stopChatAt: Infinity}`)
	if err != nil || o.chats != 1 || !o.hasStay || o.stay != 2*time.Second || !o.stopChatAt.IsZero() {
		t.Errorf("parsed %+v, %v", o, err)
	}
}

func TestBadOptionsSayWhatIsWrong(t *testing.T) {
	for src, want := range map[string]string{
		`undefined`:                                              "opts is required",
		`{user: "a"}`:                                            "url is required",
		`{url: "http://h", user: "a"}`:                           "ws:// or wss://",
		`{url: "ws://h/ws"}`:                                     "user is required",
		`{url: "ws://h/ws", user: ""}`:                           "1-64 characters",
		`{url: "ws://h/ws", user: "a".repeat(65)}`:               "1-64 characters",
		`{url: "ws://h/ws", user: "a\"b"}`:                       "quotes",
		`{url: "ws://h/ws", user: "chat"}`:                       `"chat"`,
		`{url: "ws://h/ws", user: "a", chats: 1.5}`:              "chats must be an integer",
		`{url: "ws://h/ws", user: "a", chatsPerSecond: -1}`:      "chatsPerSecond",
		`{url: "ws://h/ws", user: "a", stayMs: "x"}`:             "stayMs must be a number",
		`{url: "ws://h/ws", user: "a", leaveAt: NaN}`:            "NaN",
		`{url: "ws://h/ws", user: "a", leaveAt: 1, stayMs: 1}`:   "not both",
		`{url: "ws://h/ws", user: "a", clients: 0}`:              "clients must be",
		`{url: "ws://h/ws", user: "a", chatz: 1}`:                `unknown option "chatz"`,
		`{url: "ws://h/ws", user: "a".repeat(62), clients: 100}`: "including the -N suffix",
	} {
		_, _, err := parseJS(t, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", src, err, want)
		}
	}
}
