package chat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"
)

func parseJS(t *testing.T, src string) (clientOptions, int, error) {
	t.Helper()
	o, clients, _, err := parseWithSampling(t, src)
	return o, clients, err
}

func parseWithSampling(t *testing.T, src string) (clientOptions, int, sampling, error) {
	t.Helper()
	rt := sobek.New()
	v, err := rt.RunString("(" + src + ")")
	if err != nil {
		t.Fatal(err)
	}
	return parseOptions(rt, v)
}

func TestOneClientInTenIsALatencyProbeUnlessTheScriptSaysOtherwise(t *testing.T) {
	for src, want := range map[string]sampling{
		`{url: "ws://h/ws", user: "u"}`:                       {10},
		`{url: "ws://h/ws", user: "u", latencyProbeEvery: 4}`: {4},
		`{url: "ws://h/ws", user: "u", latencyProbeEvery: 1}`: {1},
	} {
		_, _, got, err := parseWithSampling(t, src)
		if err != nil || got != want {
			t.Errorf("%s: got %+v, %v; want %+v", src, got, err, want)
		}
	}
	root := New()
	var probes []bool
	for range 8 {
		probes = append(probes, root.nextIsProbe(sampling{probeEvery: 4}))
	}
	if want := []bool{true, false, false, false, true, false, false, false}; fmt.Sprint(probes) != fmt.Sprint(want) {
		t.Errorf("8 clients, one probe in 4 starting with the first: got %v", probes)
	}
	for src, want := range map[string]string{
		`{url: "ws://h/ws", user: "u", latencyProbeEvery: 0}`:      "latencyProbeEvery must be an integer from 1 to 1000",
		`{url: "ws://h/ws", user: "u", latencyProbeEvery: 1.5}`:    "latencyProbeEvery must be an integer",
		`{url: "ws://h/ws", user: "u", latencyProbeEvery: "many"}`: "latencyProbeEvery must be an integer",
	} {
		if _, _, _, err := parseWithSampling(t, src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", src, err, want)
		}
	}
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
	o, _, err = parseJS(t, `{url: "ws://h/ws", user: "u", sourceAddresses: ["127.0.0.2", "127.0.1.3"]}`)
	if err != nil || fmt.Sprint(o.sources) != "[127.0.0.2 127.0.1.3]" {
		t.Errorf("sourceAddresses parsed %v, %v", o.sources, err)
	}
}

func TestBadOptionsSayWhatIsWrong(t *testing.T) {
	for src, want := range map[string]string{
		`undefined`:                                                    "opts is required",
		`{user: "a"}`:                                                  "url is required",
		`{url: "http://h", user: "a"}`:                                 "ws:// or wss://",
		`{url: "ws://h/ws"}`:                                           "user is required",
		`{url: "ws://h/ws", user: ""}`:                                 "1-64 characters",
		`{url: "ws://h/ws", user: "a".repeat(65)}`:                     "1-64 characters",
		`{url: "ws://h/ws", user: "a\"b"}`:                             "quotes",
		`{url: "ws://h/ws", user: "chat"}`:                             `"chat"`,
		`{url: "ws://h/ws", user: "a", chats: 1.5}`:                    "chats must be an integer",
		`{url: "ws://h/ws", user: "a", chatsPerSecond: -1}`:            "chatsPerSecond",
		`{url: "ws://h/ws", user: "a", stayMs: "x"}`:                   "stayMs must be a number",
		`{url: "ws://h/ws", user: "a", leaveAt: NaN}`:                  "NaN",
		`{url: "ws://h/ws", user: "a", leaveAt: 1, stayMs: 1}`:         "not both",
		`{url: "ws://h/ws", user: "a", clients: 0}`:                    "clients must be",
		`{url: "ws://h/ws", user: "a", chatz: 1}`:                      `unknown option "chatz"`,
		`{url: "ws://h/ws", user: "a".repeat(62), clients: 100}`:       "including the -N suffix",
		`{url: "ws://h/ws", user: "a", sourceAddresses: ["10.0.0.1"]}`: "not an IPv4 loopback",
		`{url: "ws://h/ws", user: "a", sourceAddresses: ["x"]}`:        "not an IPv4 loopback",
		`{url: "ws://h/ws", user: "a", pingEveryMs: -1}`:               "pingEveryMs must be",
		`{url: "ws://h/ws", user: "a", churnPerMinute: 1.5}`:           "churnPerMinute must be a share",
		`{url: "ws://h/ws", user: "a", churnPerMinute: 0.01}`:          "churnPerMinute needs leaveAt",
	} {
		_, _, err := parseJS(t, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", src, err, want)
		}
	}
}

func TestScheduleAsTheCapacityScriptPassesIt(t *testing.T) {
	rt := sobek.New()
	v, err := rt.RunString(`({periodMs: 1000, steps: [
		{clients: 50, fromMs: 1763900002000, toMs: 1763900006000},
		{clients: 100, fromMs: 1763900008000.5, toMs: 1763900012000}]})`)
	if err != nil {
		t.Fatal(err)
	}
	period, steps, err := parseSchedule(rt, v)
	if err != nil {
		t.Fatal(err)
	}
	if period != time.Second || len(steps) != 2 || steps[1].clients != 100 ||
		!steps[0].from.Equal(time.UnixMilli(1763900002000)) || !steps[1].to.Equal(time.UnixMilli(1763900012000)) {
		t.Errorf("period %v, steps %+v", period, steps)
	}
	for src, want := range map[string]string{
		`({periodMs: 5})`: "periodMs must be",
		`({steps: [{clients: 1, fromMs: 10, toMs: 5}]})`:                                      "0 < fromMs < toMs",
		`({steps: [{clients: 1, fromMs: 10, toMs: 20}, {clients: 2, fromMs: 15, toMs: 30}]})`: "starts before",
		`({steps: [{clients: "x", fromMs: 10, toMs: 20}]})`:                                   "clients must be a number",
	} {
		v, err := rt.RunString(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := parseSchedule(rt, v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", src, err, want)
		}
	}
}
