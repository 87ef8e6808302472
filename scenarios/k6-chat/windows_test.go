package chat

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Clients chat across a two-step schedule against the real server: every
// chat and latency lands in the step it happened in, the steps add up to the
// totals, and the rate schedule sets each step's pace.
func TestStepsCountWhatHappenedInThemAgainstARealServer(t *testing.T) {
	srv := startServer(t)
	tot := newTotals()
	tl := newTally(tot)
	// The clients are meant to chat from their start, which is where the
	// first step begins.
	start := time.Now()
	mid := start.Add(1500 * time.Millisecond)
	end := mid.Add(1500 * time.Millisecond)
	tot.schedule(500*time.Millisecond, []step{{clients: 4, from: start, to: mid}, {clients: 4, from: mid, to: end}})

	stopDrain := make(chan struct{})
	drained := make(chan struct{})
	go func() { // the VU's flusher
		defer close(drained)
		for {
			select {
			case <-stopDrain:
				tl.drain()
				return
			case <-time.After(50 * time.Millisecond):
				tl.drain()
			}
		}
	}()
	var wg sync.WaitGroup
	for _, user := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClient(context.Background(), clientOptions{
				url: srv.url(), user: user, room: "public",
				// 2/s in the first step, 8/s in the second.
				chatsPerSecond: 2, rateChanges: []rateChange{{at: mid, chatsPerSecond: 8}},
				stopChatAt: end.Add(-300 * time.Millisecond), leaveAt: end.Add(500 * time.Millisecond),
			}, tl)
		}()
	}
	wg.Wait()
	close(stopDrain)
	<-drained

	r := tot.report()
	if len(r.Steps) != 2 || r.Steps[0].Clients != 4 || r.Steps[1].FromMs != mid.UnixMilli() {
		t.Fatalf("steps = %+v", r.Steps)
	}
	s0, s1 := r.Steps[0].Counters, r.Steps[1].Counters
	// 4 clients x 2/s x 1.5 s vs 4 x 8/s x 1.2 s.
	if s0["chat_sent"] < 4 || s0["chat_sent"] > 20 {
		t.Errorf("step 1 chat_sent = %d, want about 4 x 2/s x 1.5 s", s0["chat_sent"])
	}
	if s1["chat_sent"] < 2*s0["chat_sent"] {
		t.Errorf("step 2 chat_sent = %d, want well above step 1's %d (4x the rate)", s1["chat_sent"], s0["chat_sent"])
	}
	if r.Counters["chat_sent"] != srv.stat(t, "chat_in") {
		t.Errorf("total chat_sent %d, server chat_in %d", r.Counters["chat_sent"], srv.stat(t, "chat_in"))
	}
	// Nearly everything was received within the steps (chats stop before the
	// end; a reader hands its last batch on at its next frame, which may be
	// after the last step: the leaves).
	total := r.Counters["chat_received"]
	if got := s0["chat_received"] + s1["chat_received"]; got > total || got < total*9/10 {
		t.Errorf("steps received %d, total %d", got, total)
	}
	if n := r.Steps[0].LatencyUs.TotalCount + r.Steps[1].LatencyUs.TotalCount; n > r.LatencyUs.TotalCount || n < r.LatencyUs.TotalCount*9/10 {
		t.Errorf("step latencies %d, total %d", n, r.LatencyUs.TotalCount)
	}
	// Every chat was intended, and sent, within the steps; each step's
	// response times are its service times (a healthy server: nothing held).
	intended := s0["chats_intended"] + s1["chats_intended"]
	if intended != r.Counters["chats_intended"] || intended != r.Counters["chat_sent"] {
		t.Errorf("steps intended %d chats; total intended %d, sent %d", intended, r.Counters["chats_intended"], r.Counters["chat_sent"])
	}
	for i, st := range r.Steps {
		if st.ResponseTimeUs.TotalCount != st.LatencyUs.TotalCount {
			t.Errorf("step %d: %d response times, %d service times", i, st.ResponseTimeUs.TotalCount, st.LatencyUs.TotalCount)
		}
	}
	st, ok := tot.stepStats(1)
	if !ok || st.ChatReceived != s1["chat_received"] || st.LatencyCount == 0 || st.LatencyP95Ms <= 0 || st.Errors != 0 {
		t.Errorf("stepStats(1) = %+v", st)
	}
	if _, ok := tot.stepStats(2); ok {
		t.Error("stepStats(2) of two steps answered")
	}
	// Periods of 500 ms cover the whole run, and add up to the totals too.
	var periodReceived int64
	for i, p := range r.Periods {
		if p.ToMs-p.FromMs != 500 || p.FromMs%500 != 0 || (i > 0 && p.FromMs <= r.Periods[i-1].FromMs) {
			t.Fatalf("period %d = %d..%d", i, p.FromMs, p.ToMs)
		}
		periodReceived += p.Counters["chat_received"]
	}
	if r.PeriodMs != 500 || periodReceived != r.Counters["chat_received"] {
		t.Errorf("periods (%d ms) received %d, total %d", r.PeriodMs, periodReceived, r.Counters["chat_received"])
	}
}

// The room option reaches the wire: join and chats name it.
func TestTheRoomOptionIsJoinedAndChattedIn(t *testing.T) {
	frames := make(chan string, 8)
	url := fakeServer(t, func(c *websocket.Conn) {
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			frames <- string(msg)
			if strings.Contains(string(msg), `"join"`) {
				_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"join","room":"lobby-7","user":"r","online":1}`))
			}
			if closedOnLeave(c, msg) {
				return
			}
		}
	})
	tl := newTally(newTotals())
	runClient(context.Background(), clientOptions{url: url, user: "r", room: "lobby-7", chats: 1, stay: 100 * time.Millisecond, hasStay: true}, tl)
	close(frames)
	var got []string
	for f := range frames {
		got = append(got, f)
	}
	if len(got) != 3 || got[0] != `{"type":"join","room":"lobby-7","user":"r"}` ||
		!strings.HasPrefix(got[1], `{"type":"chat","room":"lobby-7","text":`) {
		t.Errorf("frames = %q", got)
	}
}

func TestScheduleAndRoomOptionsAreChecked(t *testing.T) {
	o, _, err := parseJS(t, `{url: "ws://h/ws", user: "u", room: "lobby", rateChanges: [[1763900000000, 2], [1763900001000, 0.5]]}`)
	if err != nil || o.room != "lobby" || len(o.rateChanges) != 2 || o.rateChanges[1].chatsPerSecond != 0.5 {
		t.Fatalf("parsed %+v, %v", o, err)
	}
	// From 0.5 s in: 2/s until the change at 1 s, then 0.5/s (phase 0).
	sc := newChatSchedule(&o, time.UnixMilli(1763900000500), 0)
	var got []int64
	for range 3 {
		got = append(got, sc.next.UnixMilli()-1763900000000)
		sc.advance()
	}
	if fmt.Sprint(got) != "[500 1000 3000]" {
		t.Errorf("intended times (ms after the first change) = %v, want [500 1000 3000]", got)
	}
	o, _, _ = parseJS(t, `{url: "ws://h/ws", user: "u"}`)
	if o.room != "public" {
		t.Errorf("default room = %q", o.room)
	}
	for src, want := range map[string]string{
		`{url: "ws://h/ws", user: "u", room: "chat"}`:                   `"chat"`,
		`{url: "ws://h/ws", user: "u", room: "a\"b"}`:                   "quotes",
		`{url: "ws://h/ws", user: "u", room: ""}`:                       "1-64",
		`{url: "ws://h/ws", user: "u", rateChanges: [[2, 1], [1, 1]]}`:  "ascending",
		`{url: "ws://h/ws", user: "u", rateChanges: [[1763900000000]]}`: "rateChanges[0]",
		`{url: "ws://h/ws", user: "u", rateChanges: [[1, -1]]}`:         "chatsPerSecond >= 0",
	} {
		if _, _, err := parseJS(t, src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", src, err, want)
		}
	}
}
