package chat

import (
	"fmt"
	"testing"
	"time"
)

// ms is a moment t ms after an arbitrary epoch.
func ms(t float64) time.Time {
	return time.UnixMicro(1763900000000000 + int64(t*1000))
}

func times(s chatSchedule, n int) string {
	var out []string
	for i := 0; i < n && !s.next.IsZero(); i++ {
		out = append(out, fmt.Sprint(float64(s.next.Sub(ms(0)).Microseconds())/1000))
		s.advance()
	}
	return fmt.Sprint(out)
}

func TestTheScheduleIsStartPlusPhasePlusKPeriodsAcrossRateChanges(t *testing.T) {
	o := clientOptions{chatsPerSecond: 4, stopChatAt: ms(2000),
		rateChanges: []rateChange{{at: ms(1000), chatsPerSecond: 0}, {at: ms(1500), chatsPerSecond: 10}}}
	// 4/s from 100 ms at phase 0.5 (125 ms into each 250 ms period); nothing
	// from 1 s; 10/s from 1.5 s at the same phase; nothing from 2 s on.
	got := times(newChatSchedule(&o, ms(100), 0.5), 20)
	if want := "[225 475 725 975 1550 1650 1750 1850 1950]"; got != want {
		t.Errorf("intended times = %s, want %s", got, want)
	}
	// A client started after a change chats at the rate in force then.
	if got := times(newChatSchedule(&o, ms(1600), 0), 3); got != "[1600 1700 1800]" {
		t.Errorf("started at 1.6 s: %s", got)
	}
	// No stop and no rate: nothing; no stop and a rate: forever.
	if s := newChatSchedule(&clientOptions{}, ms(0), 0); !s.next.IsZero() {
		t.Errorf("a schedule without a rate has a chat at %v", s.next)
	}
	s := newChatSchedule(&clientOptions{chatsPerSecond: 1000}, ms(0), 0)
	if n := s.countDue(ms(999.5)); n != 1000 {
		t.Errorf("1000/s for 1 s: %d chats due, want 1000", n)
	}
	if s.next != ms(0) {
		t.Error("countDue moved the schedule")
	}
}

func TestHeldTimeIsTheServersPartOfAnInterval(t *testing.T) {
	var l holdLog
	l.add(ms(0), ms(100))   // the join wait
	l.add(ms(150), ms(160)) // a quick write
	l.add(ms(155), ms(170)) // overlapping: only 160-170 counts
	l.add(ms(300), ms(800)) // a blocked write
	for _, c := range []struct {
		at   float64
		want time.Duration
	}{{0, 0}, {50, 50 * time.Millisecond}, {120, 100 * time.Millisecond}, {165, 115 * time.Millisecond},
		{200, 120 * time.Millisecond}, {500, 320 * time.Millisecond}, {900, 620 * time.Millisecond}} {
		if got := l.held(ms(c.at)); got != c.want {
			t.Errorf("held(%v ms) = %v, want %v", c.at, got, c.want)
		}
	}
	l.prune(ms(250))
	if len(l.holds) != 1 || l.held(ms(250)) != 120*time.Millisecond || l.held(ms(900)) != 620*time.Millisecond {
		t.Errorf("after pruning to 250 ms: %d holds, held(250) %v, held(900) %v", len(l.holds), l.held(ms(250)), l.held(ms(900)))
	}
	l.prune(ms(900))
	if len(l.holds) != 0 || l.held(ms(1000)) != 620*time.Millisecond {
		t.Errorf("after pruning everything: held = %v", l.held(ms(1000)))
	}
}

// The worked example of docs/methodology.md: a client joins at 0, is
// acknowledged at 2 s, chats every 500 ms from 100 ms; its write at 3 s
// blocks for 1.5 s; its timer fires 40 ms late at 5.1 s.
func TestALateChatIsLateByTheLargestOfItsParts(t *testing.T) {
	var l holdLog
	joinedAt := ms(2000)
	l.add(ms(0), joinedAt)
	for _, c := range []struct {
		intended, sent float64
		want           cause
		server         time.Duration
	}{
		{100, 2000.2, lateJoin, 1900 * time.Millisecond},
		{1600, 2000.4, lateJoin, 400 * time.Millisecond},
		{2100, 2100.3, onTime, 0},
		{3100, 4500, lateWrite, 1400 * time.Millisecond},
		{5100, 5140, lateTimer, 0},
		{1900, 2200, lateTimer, 100 * time.Millisecond}, // 100 ms join, 200 ms its own
	} {
		if c.intended == 3100 {
			l.add(ms(3000), ms(4500))
		}
		x := l.lateBy(ms(c.intended), ms(c.sent), joinedAt)
		if x.cause() != c.want || x.server != c.server {
			t.Errorf("intended %v ms, sent %v ms: cause %v, server %v; want %v, %v",
				c.intended, c.sent, x.cause(), x.server, c.want, c.server)
		}
	}
}
