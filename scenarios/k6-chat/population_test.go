package chat

// The population's heartbeats and churn against the real Go chat server.

import (
	"context"
	"math"
	"testing"
	"time"
)

func TestPingsEveryPeriodAreAnsweredAndTimedFromTheirIntendedTimes(t *testing.T) {
	srv := startServer(t)
	tl := newTally(newTotals())
	now := time.Now()
	runClient(context.Background(), clientOptions{
		url: srv.url(), user: "pinger", pingEvery: 200 * time.Millisecond,
		leaveAt: now.Add(2100 * time.Millisecond),
	}, tl)
	got := counts(tl)
	// 2.1 s at one ping per 200 ms from a random phase: 10 or 11.
	if got["pings_sent"] < 10 || got["pings_sent"] > 11 {
		t.Errorf("pings_sent = %d, want 10 or 11", got["pings_sent"])
	}
	if got["pongs_received"] != got["pings_sent"] {
		t.Errorf("pongs_received = %d, want one per ping (%d)", got["pongs_received"], got["pings_sent"])
	}
	h := tl.totals.report().PongLatencyUs
	if h.TotalCount != got["pongs_received"] {
		t.Errorf("pong latencies = %d, want one per pong (%d)", h.TotalCount, got["pongs_received"])
	}
	if p99 := h.Histogram().ValueAtQuantile(99); p99 <= 0 || p99 > 500_000 {
		t.Errorf("pong p99 = %d µs, want loopback-sized (0, 0.5 s]", p99)
	}
	wantCounts(t, got, map[string]int64{"sessions": 1, "sessions_closed": 1, "ws_errors": 0})
}

func TestAChurningClientLeavesCleanlyAndJoinsAgainUntilItsLeaveTime(t *testing.T) {
	srv := startServer(t)
	tl := newTally(newTotals())
	now := time.Now()
	// At 60 leaves a minute a client leaves about once a second: over 3 s, a
	// few sessions, each closed cleanly.
	runChurning(context.Background(), clientOptions{
		url: srv.url(), user: "churner", churnPerMinute: 1, leaveAt: now.Add(3 * time.Second),
	}, tl)
	if d := time.Since(now); d > 8*time.Second {
		t.Errorf("churning took %v, want about 3 s", d)
	}
	got := counts(tl)
	if got["sessions"] < 1 || got["sessions"] != got["sessions_closed"] {
		t.Errorf("sessions = %d, sessions_closed = %d: want every session closed cleanly", got["sessions"], got["sessions_closed"])
	}
	wantCounts(t, got, map[string]int64{"ws_errors": 0, "connect_errors": 0})
	if n := srv.stat(t, "connections_current"); n != 0 {
		t.Errorf("connections_current = %d after the last leave, want 0", n)
	}
}

func TestChurnGapsAverageOneOverTheRate(t *testing.T) {
	var sum time.Duration
	const n = 10_000
	for i := range n {
		sum += churnGap(0.01, (float64(i)+0.5)/n)
	}
	mean := sum.Minutes() / n
	if math.Abs(mean-100) > 2 {
		t.Errorf("mean gap at 1 %% a minute = %.1f min, want about 100", mean)
	}
	if churnGap(0.5, 0) != 0 {
		t.Errorf("u = 0 gives no wait")
	}
}
