package chat

// Slow readers (slow.go): against the real Go server, a paused reader with a
// small buffer fills the server's queue for it while the healthy clients get
// every chat on time; against a test server that gives up on a blocked
// client, the client notes when it was dropped; and the option is checked.

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestAPausedSlowReaderFillsTheServersQueueAndCountsApartFromTheHealthyClients(t *testing.T) {
	srv := startServer(t)
	healthy := newTally(newTotals())
	slow := newTally(newTotals())
	now := time.Now()
	// 60 clients chatting 10/s each send the slow client 600 chats (55 KB)
	// a second, 2,700 in its 4.5 s pause: more than the Go server holds for
	// it (measured: about 2,100 with an MSS of 1460, in its kernel's send
	// buffer, its writer's batch of up to 256 and its queue of 256).
	const chatters = 60
	stopChat := now.Add(5700 * time.Millisecond)
	leave := now.Add(6700 * time.Millisecond)
	pauseFrom, pauseUntil := now.Add(700*time.Millisecond), now.Add(5200*time.Millisecond)
	var wg sync.WaitGroup
	for i := range chatters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClient(context.Background(), clientOptions{
				url: srv.url(), user: "h" + strconv.Itoa(i), chatsPerSecond: 10,
				stopChatAt: stopChat, leaveAt: leave, countOnly: i%3 != 0,
			}, healthy)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		runClient(context.Background(), clientOptions{
			url: srv.url(), user: "slow", leaveAt: leave, countOnly: true,
			slow: &slowOptions{recvBufferBytes: 4096, maxSegmentBytes: 1460, pauseFrom: pauseFrom, pauseUntil: pauseUntil},
		}, slow)
	}()
	wg.Wait()

	if dropped := srv.stat(t, "dropped_slow"); dropped == 0 {
		t.Errorf("the server dropped nothing for the paused reader: its queue never filled")
	}
	// The healthy clients: every chat reached every other healthy client
	// (but those sent before all had joined), on time, and nothing of the
	// slow client is in their counts.
	h := counts(healthy)
	wantCounts(t, h, map[string]int64{"sessions": chatters, "sessions_closed": chatters, "abnormal_closes": 0, "ws_errors": 0})
	if all := h["chat_sent"] * (chatters - 1); h["chat_sent"] < chatters*25 || h["chat_received"] > all || h["chat_received"] < all*99/100 {
		t.Errorf("healthy clients sent %d chats and received %d, want 99-100%% of %d (each to the %d others)",
			h["chat_sent"], h["chat_received"], all, chatters-1)
	}
	r := healthy.totals.report()
	if p99 := r.LatencyUs.Histogram().ValueAtQuantile(99); p99 >= 1_000_000 {
		t.Errorf("healthy latency p99 %d µs: the broadcast waited on the slow reader", p99)
	}
	// The slow client: its own counts, all in the slow report.
	slow.drain()
	sr := slow.totals.slowReport(now)
	if sr == nil {
		t.Fatal("no slow report")
	}
	if sr.Clients != 1 || sr.ClosedByServer != 0 || len(sr.ClosedAtMs) != 0 || sr.Errors != 0 {
		t.Errorf("slow report %+v, want 1 client, not closed, no errors", *sr)
	}
	if sr.Received == 0 || sr.Received >= h["chat_sent"] {
		t.Errorf("slow client received %d of %d chats sent: want some, and fewer (the server dropped some)", sr.Received, h["chat_sent"])
	}
	if planned := pauseUntil.Sub(pauseFrom).Milliseconds(); sr.ReadPausedMs < planned-300 || sr.ReadPausedMs > planned+50 {
		t.Errorf("read paused %d ms, planned %d", sr.ReadPausedMs, planned)
	}
	if sr.StartMs != now.UnixMilli() {
		t.Errorf("start_ms %d, want %d", sr.StartMs, now.UnixMilli())
	}
	if rep := healthy.totals.slowReport(now); rep != nil {
		t.Errorf("the healthy totals have a slow report: %+v", *rep)
	}
}

// floodingServer echoes the join, then writes chats to the client as fast as
// it can; a write blocked for blockedFor makes it drop the client with a TCP
// reset, as a server drops a consumer too slow to keep. droppedAt receives
// the moment.
func floodingServer(t *testing.T, blockedFor time.Duration, droppedAt chan<- time.Time) string {
	frame := []byte(`{"type":"chat","room":"public","user":"x","text":"` + strings.Repeat("y", 200) + `","ts":1}`)
	return fakeServer(t, func(c *websocket.Conn) {
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
		_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"join","room":"public","user":"slow","online":1}`))
		// The client's leave is answered with a close while the flood goes on.
		left := make(chan struct{})
		var leaving atomic.Bool
		go func() {
			defer close(left)
			for {
				_, msg, err := c.ReadMessage()
				if err != nil {
					return
				}
				if string(msg) == `{"type":"leave"}` {
					leaving.Store(true)
					_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""), time.Now().Add(time.Second))
					// (the client's answer ends the loop)
				}
			}
		}()
		for {
			_ = c.SetWriteDeadline(time.Now().Add(blockedFor))
			if err := c.WriteMessage(websocket.TextMessage, frame); err != nil {
				if leaving.Load() {
					<-left
					return
				}
				_ = c.UnderlyingConn().(*net.TCPConn).SetLinger(0)
				_ = c.UnderlyingConn().Close()
				droppedAt <- time.Now()
				return
			}
		}
	})
}

func TestASlowReaderDroppedByTheServerWhilePausedNotesWhenAndIsNoError(t *testing.T) {
	droppedAt := make(chan time.Time, 1)
	url := floodingServer(t, 300*time.Millisecond, droppedAt)
	tl := newTally(newTotals())
	start := time.Now()
	runClient(context.Background(), clientOptions{
		url: url, user: "slow", leaveAt: start.Add(2500 * time.Millisecond), countOnly: true,
		slow: &slowOptions{recvBufferBytes: 4096, pauseFrom: start.Add(200 * time.Millisecond), pauseUntil: start.Add(2 * time.Second)},
	}, tl)
	tl.drain()
	dropped := <-droppedAt
	sr := tl.totals.slowReport(start)
	if sr == nil || sr.Clients != 1 || sr.ClosedByServer != 1 || sr.Errors != 0 || len(sr.ClosedAtMs) != 1 {
		t.Fatalf("slow report %+v, want 1 client closed by the server, no errors", sr)
	}
	// Seen while still paused, within a few polls of the reset.
	want := dropped.Sub(start).Milliseconds()
	if got := sr.ClosedAtMs[0]; got < want || got > want+4*slowPollEvery.Milliseconds() {
		t.Errorf("closed_at_ms %d, the server dropped it at %d ms", got, want)
	}
	if sr.ReadPausedMs > 1850 {
		t.Logf("paused %d ms (the pause runs to its end even after the drop)", sr.ReadPausedMs)
	}
	c := tl.totals.report().Counters
	wantCounts(t, c, map[string]int64{"sessions": 1, "sessions_closed": 1, "abnormal_closes": 0, "ws_errors": 0})
}

func TestASlowReaderThatLeavesBeforeTheServerGivesUpIsNotClosedByIt(t *testing.T) {
	droppedAt := make(chan time.Time, 1)
	url := floodingServer(t, 5*time.Second, droppedAt)
	tl := newTally(newTotals())
	start := time.Now()
	runClient(context.Background(), clientOptions{
		url: url, user: "slow", leaveAt: start.Add(900 * time.Millisecond), countOnly: true,
		slow: &slowOptions{recvBufferBytes: 4096, pauseFrom: start.Add(100 * time.Millisecond), pauseUntil: start.Add(600 * time.Millisecond)},
	}, tl)
	tl.drain()
	sr := tl.totals.slowReport(start)
	if sr == nil || sr.ClosedByServer != 0 || len(sr.ClosedAtMs) != 0 || sr.Received == 0 || sr.Errors != 0 {
		t.Fatalf("slow report %+v, want chats received, no close by the server, no errors", sr)
	}
}

func TestSlowOptionsAreCheckedAndASlowSessionNeverChats(t *testing.T) {
	o, _, err := parseJS(t, `{url: "ws://h/ws", user: "u", slow: {recvBufferBytes: 4096, pauseFromMs: 1763900000000, pauseUntilMs: 1763900015000}}`)
	if err != nil || o.slow == nil || o.slow.recvBufferBytes != 4096 ||
		o.slow.pauseUntil.Sub(o.slow.pauseFrom) != 15*time.Second {
		t.Fatalf("parsed %+v, %v", o.slow, err)
	}
	if o, _, err := parseJS(t, `{url: "ws://h/ws", user: "u"}`); err != nil || o.slow != nil {
		t.Errorf("without slow: %+v, %v", o.slow, err)
	}
	for src, want := range map[string]string{
		`{url: "ws://h/ws", user: "u", slow: 3}`:                                          "slow must be an object",
		`{url: "ws://h/ws", user: "u", slow: {recvBuffer: 4096}}`:                         `unknown slow option "recvBuffer"`,
		`{url: "ws://h/ws", user: "u", slow: {recvBufferBytes: 10}}`:                      "recvBufferBytes must be an integer",
		`{url: "ws://h/ws", user: "u", slow: {maxSegmentBytes: 100000}}`:                  "maxSegmentBytes must be an integer",
		`{url: "ws://h/ws", user: "u", slow: {pauseFromMs: 5}}`:                           "both pauseFromMs and pauseUntilMs",
		`{url: "ws://h/ws", user: "u", slow: {pauseFromMs: 5, pauseUntilMs: 4}}`:          "0 < pauseFromMs < pauseUntilMs",
		`{url: "ws://h/ws", user: "u", slow: {pauseFromMs: "x", pauseUntilMs: 4}}`:        "must be a number",
		`{url: "ws://h/ws", user: "u", chatsPerSecond: 1, slow: {recvBufferBytes: 4096}}`: "never chats",
		`{url: "ws://h/ws", user: "u", chats: 1, slow: {}}`:                               "never chats",
		`{url: "ws://h/ws", user: "u", rateChanges: [[1763900000000, 1]], slow: {}}`:      "never chats",
	} {
		if _, _, err := parseJS(t, src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", src, err, want)
		}
	}
}

func TestAReportWithoutSlowClientsHasNoSlowObject(t *testing.T) {
	root := New()
	if v := root.report().jsValue(); v["slow"] != nil {
		t.Errorf("slow = %v, want null", v["slow"])
	}
	root.slowTotals.counts[cSessions] = 2
	root.slowTotals.counts[cChatReceived] = 7
	root.startMs.Store(1763900000000)
	root.slowTotals.slow.started(time.UnixMilli(1763900000100))
	root.slowTotals.slow.ended(1500*time.Millisecond, time.UnixMilli(1763900004000), true)
	root.slowTotals.slow.ended(1400*time.Millisecond, time.UnixMilli(1763900003000), true)
	s, _ := root.report().jsValue()["slow"].(map[string]any)
	if s == nil || s["clients"] != 2.0 || s["received"] != 7.0 || s["closed_by_server"] != 2.0 ||
		s["read_paused_ms"] != 1500.0 || s["start_ms"] != 1763900000000.0 ||
		len(s["closed_at_ms"].([]any)) != 2 || s["closed_at_ms"].([]any)[0] != 3000.0 {
		t.Errorf("slow = %v", s)
	}
}
