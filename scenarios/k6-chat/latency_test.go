package chat

// Intended times against in-test servers that misbehave on purpose: one slow
// to acknowledge joins, one that stops reading, and a client whose own timer
// is late. Each server echoes every chat back to its sender, so the client's
// reader times its own chats.

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// echoServer is how a test server misbehaves.
type echoServer struct {
	// joinDelay: the join is acknowledged this long after it arrived.
	joinDelay time.Duration
	// After stallAfter past the acknowledgement, the server stops reading
	// (and so echoing) for stallFor; forever when stallFor is 0.
	stallAfter, stallFor time.Duration
	// readBuffer sets the server socket's receive buffer (SO_RCVBUF).
	readBuffer int
}

// start serves /ws until the test ends and returns its URL.
func (e echoServer) start(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	url := fakeServer(t, func(c *websocket.Conn) {
		if tc, ok := c.UnderlyingConn().(*net.TCPConn); ok && e.readBuffer > 0 {
			_ = tc.SetReadBuffer(e.readBuffer)
		}
		e.serve(c, done)
	})
	// Cleanups run last first: the stalled handlers end before the server closes.
	t.Cleanup(func() { close(done) })
	return url
}

func (e echoServer) serve(c *websocket.Conn, done <-chan struct{}) {
	sleep := func(d time.Duration) bool {
		if d == 0 {
			<-done
			return false
		}
		select {
		case <-done:
			return false
		case <-time.After(d):
			return true
		}
	}
	_, msg, err := c.ReadMessage()
	if err != nil {
		return
	}
	var join struct{ User string }
	_ = json.Unmarshal(msg, &join)
	if e.joinDelay > 0 && !sleep(e.joinDelay) {
		return
	}
	user, _ := json.Marshal(join.User)
	_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"join","room":"public","user":`+string(user)+`,"online":1}`))
	acked := time.Now()
	stalled := false
	for {
		if e.stallAfter > 0 && !stalled && time.Since(acked) >= e.stallAfter {
			stalled = true
			if !sleep(e.stallFor) {
				return
			}
		}
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if closedOnLeave(c, msg) {
			return
		}
		_ = c.WriteMessage(websocket.TextMessage, msg) // the chat, back to its sender
	}
}

// chatFigures are what a test asks of a finished client's report.
type chatFigures struct {
	counters map[string]int64
	report   Report
}

func runAndReport(t *testing.T, ctx context.Context, o clientOptions) chatFigures {
	t.Helper()
	tl := newTally(newTotals())
	runClient(ctx, o, tl)
	c := counts(tl)
	t.Logf("counters: %v", c)
	return chatFigures{counters: c, report: tl.totals.report()}
}

func (f chatFigures) missed() int64 {
	return f.counters["chats_missed_join"] + f.counters["chats_missed_write"] + f.counters["chats_missed_timer"]
}

// Every chat is either sent or missed, and the sent ones are counted by cause.
func (f chatFigures) checkSums(t *testing.T) {
	t.Helper()
	c := f.counters
	sent := c["chats_sent_on_time"] + c["chats_sent_late_join"] + c["chats_sent_late_write"] + c["chats_sent_late_timer"]
	if sent != c["chat_sent"] || c["chats_intended"] != sent+f.missed() {
		t.Errorf("chat_sent %d, intended %d; by cause sent %d, missed %d (all: %v)", c["chat_sent"], c["chats_intended"], sent, f.missed(), c)
	}
}

func TestAServerSlowToAcknowledgeTheJoinMakesTheFirstChatsLateByJoin(t *testing.T) {
	url := echoServer{joinDelay: 2 * time.Second}.start(t)
	start := time.Now()
	// 4/s from the session's start: 8 chats fall in the 2 s before the ack.
	f := runAndReport(t, context.Background(), clientOptions{url: url, user: "patient", chatsPerSecond: 4,
		stopChatAt: start.Add(3500 * time.Millisecond), leaveAt: start.Add(4 * time.Second)})
	f.checkSums(t)
	c := f.counters
	wantCounts(t, c, map[string]int64{"chats_intended": 14, "chat_sent": 14, "chats_sent_late_write": 0,
		"chats_sent_late_timer": 0, "sessions_closed": 1, "abnormal_closes": 0})
	if n := c["chats_sent_late_join"]; n < 7 || n > 8 {
		t.Errorf("chats_sent_late_join = %d, want the 7 or 8 intended before the ack (all: %v)", n, c)
	}
	if f.missed() != 0 {
		t.Errorf("%d chats missed; after the ack every chat intended is sent", f.missed())
	}
	response, service := f.report.ResponseTimeUs.Histogram(), f.report.LatencyUs.Histogram()
	if response.TotalCount() != 14 || service.TotalCount() != 14 {
		t.Fatalf("timed %d response, %d service times; want the 14 chats echoed", response.TotalCount(), service.TotalCount())
	}
	// The first chat waited for the ack (2 s less its phase, under 250 ms);
	// written, every chat came back at once.
	if max := response.Max(); max < 1_700_000 || max > 2_200_000 {
		t.Errorf("response time max = %d µs, want the wait for the ack, 1.75-2 s", max)
	}
	if max := service.Max(); max > 200_000 {
		t.Errorf("service time max = %d µs, want loopback-sized: the wait is not the echo's", max)
	}
}

func TestAServerThatStopsReadingMakesChatsLateThenMissedByWrite(t *testing.T) {
	// Small buffers on both ends: a few hundred chats fill them.
	url := echoServer{stallAfter: 300 * time.Millisecond, stallFor: 3 * time.Second, readBuffer: 4096}.start(t)
	start := time.Now()
	f := runAndReport(t, context.Background(), clientOptions{url: url, user: "blocked", chatsPerSecond: 200,
		stopChatAt: start.Add(4500 * time.Millisecond), leaveAt: start.Add(5500 * time.Millisecond), sendBufferBytes: 4096})
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the session took %v, want its 5.5 s and the close", d)
	}
	f.checkSums(t)
	c := f.counters
	if c["chats_sent_late_write"] == 0 || c["chats_missed_write"] < 100 {
		t.Errorf("late by write %d, missed by write %d; want some late and hundreds missed (all: %v)",
			c["chats_sent_late_write"], c["chats_missed_write"], c)
	}
	if c["chats_intended"] < 800 || c["chats_missed_timer"] > c["chats_intended"]/100 {
		t.Errorf("intended %d (want about 900), missed by the client's own lateness %d", c["chats_intended"], c["chats_missed_timer"])
	}
	// The stall is in the response time: the chats that waited in the
	// buffers, the ones written late, and the missed ones.
	response, service := f.report.ResponseTimeUs.Histogram(), f.report.LatencyUs.Histogram()
	if response.Max() < 1_500_000 || response.TotalCount() <= service.TotalCount() {
		t.Errorf("response time: max %d µs over %d samples (service: %d); want the stall, over 1.5 s, and the missed chats",
			response.Max(), response.TotalCount(), service.TotalCount())
	}
}

func TestAServerThatNeverReadsAgainCannotHoldAClientPastTheVUContext(t *testing.T) {
	url := echoServer{stallAfter: 200 * time.Millisecond, readBuffer: 4096}.start(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(2500*time.Millisecond, cancel)
	start := time.Now()
	f := runAndReport(t, ctx, clientOptions{url: url, user: "stuck", chatsPerSecond: 200,
		leaveAt: start.Add(30 * time.Second), sendBufferBytes: 4096})
	if d := time.Since(start); d > 3500*time.Millisecond {
		t.Errorf("runClient returned %v after start, want within ~2.5 s + cutOffWait", d)
	}
	f.checkSums(t)
	c := f.counters
	if c["chats_missed_write"] < 100 || c["sessions_closed"] != 0 {
		t.Errorf("missed by write %d, sessions_closed %d; want hundreds missed and a cut-off session (all: %v)",
			c["chats_missed_write"], c["sessions_closed"], c)
	}
	// The catch-up stayed bounded: never more than maxCatchUp overdue chats
	// went out per blocked write (at most one here: it never unblocked).
	if n := c["chats_sent_late_write"]; n > maxCatchUp {
		t.Errorf("chats_sent_late_write = %d, want at most %d", n, maxCatchUp)
	}
}

func TestALateTimerIsTheLoadGeneratorsFaultNotTheServers(t *testing.T) {
	url := echoServer{}.start(t)
	start := time.Now()
	f := runAndReport(t, context.Background(), clientOptions{url: url, user: "sluggish", chatsPerSecond: 10,
		stopChatAt: start.Add(1500 * time.Millisecond), leaveAt: start.Add(2 * time.Second), timerDelay: 40 * time.Millisecond})
	f.checkSums(t)
	c := f.counters
	wantCounts(t, c, map[string]int64{"chats_intended": 15, "chat_sent": 15, "chats_sent_late_join": 0, "chats_sent_late_write": 0})
	// The first chat may fall in the join (a few ms: on time); every other
	// one waits for the late timer.
	if n := c["chats_sent_late_timer"]; n < 14 {
		t.Errorf("chats_sent_late_timer = %d, want 14 or 15 (all: %v)", n, c)
	}
	// Not the server's latency: the response time leaves the 40 ms out.
	response, service := f.report.ResponseTimeUs.Histogram(), f.report.LatencyUs.Histogram()
	if response.TotalCount() != 15 || response.Max() > 30_000 || response.Max() > service.Max()+1000 {
		t.Errorf("response time: %d samples, max %d µs (service max %d µs); want 15, without the timer's 40 ms",
			response.TotalCount(), response.Max(), service.Max())
	}
}
