package chat

// schedule.go owns when a client means to chat and whose fault it is when a
// chat goes out late: the intended time of every chat (chatSchedule), the
// moments the server held the client up (holdLog), and the rule that splits
// a chat's lateness into the server's part and the load generator's part
// (lateness). It reads no clock and touches no connection, so every rule
// here is tested on made-up times; client.go applies it.
//
// Why intended times: a client that measures from the moment it wrote a chat
// stops measuring exactly when the server stops reading (its writes block,
// its ticks are dropped), so the worst moments never reach the histogram.
// That is coordinated omission (Gil Tene; wrk2). Measured from the intended
// time instead, a stall shows up in full.

import (
	"time"
)

// Lateness and catch-up. See "Latency: intended time and coordinated
// omission" in docs/methodology.md for the rule with a worked example.
const (
	// lateAfter: a chat written at least this long after its intended time is
	// late (and its cause counted); anything sooner is on time. Go's timers
	// wake through the netpoller with millisecond granularity: on this
	// machine under load average 9 a timer fired a median 1.1 ms, p99 6 ms,
	// max 11 ms late, so a smaller bound would count the runtime's jitter.
	lateAfter = 10 * time.Millisecond
	// maxCatchUp bounds how many overdue chats a client keeps: when more
	// moments have passed unsent, the oldest beyond it are missed. It is the
	// servers' rate-limit bucket (10 tokens), so a catch-up burst is never
	// larger than what a server accepts at once.
	maxCatchUp = 10
	// maxCatchUpAge: a chat more than this overdue is missed, not sent.
	maxCatchUpAge = 5 * time.Second
	// minPeriod bounds the chat period from below (a rate above 1,000,000/s
	// chats at 1,000,000/s), so a schedule always moves on.
	minPeriod = time.Microsecond
	// maxPeriod: a rate so low that its period would overflow is no chat at all.
	maxPeriod = 1 << 62
)

// chatSchedule is a client's intended chat times: from start, one chat per
// period at the rate in force, until stopChatAt. Every client chats at a
// fixed phase of its period (random per client, so clients started together
// do not chat in step); a rate change starts a new run of periods at the
// change, at the same phase. Times are start + phase + k x period, on the
// scenario's clock (the epoch times the script passes), never the time a
// previous chat happened to go out.
type chatSchedule struct {
	changes []rateChange
	stop    time.Time // zero: none
	phase   float64   // in [0, 1)
	// The current run of periods: from runFrom, one chat per period (0: no
	// chats), until runEnd (zero: none), the time of changes[change].
	runFrom time.Time
	period  time.Duration
	runEnd  time.Time
	change  int
	// k is the index of next in the run; next is the next intended time, or
	// zero when no chat is left.
	k    int64
	next time.Time
}

// newChatSchedule is o's schedule for a client meant to start chatting at
// start, at phase (in [0, 1)) of each period.
func newChatSchedule(o *clientOptions, start time.Time, phase float64) chatSchedule {
	s := chatSchedule{changes: o.rateChanges, stop: o.stopChatAt, phase: phase}
	rate := o.chatsPerSecond
	for s.change < len(s.changes) && !start.Before(s.changes[s.change].at) {
		rate = s.changes[s.change].chatsPerSecond
		s.change++
	}
	s.startRun(start, rate)
	s.settle()
	return s
}

func (s *chatSchedule) startRun(from time.Time, rate float64) {
	s.runFrom, s.k, s.period = from, 0, 0
	if p := float64(time.Second) / rate; rate > 0 && p < maxPeriod {
		s.period = max(time.Duration(p), minPeriod)
	}
	s.runEnd = time.Time{}
	if s.change < len(s.changes) {
		s.runEnd = s.changes[s.change].at
	}
}

// settle sets next to the k-th time of the current run, moving on to the
// next run while the current one has no chat left.
func (s *chatSchedule) settle() {
	for {
		if s.period > 0 {
			t := s.runFrom.Add(time.Duration(s.phase*float64(s.period)) + time.Duration(s.k)*s.period)
			if s.runEnd.IsZero() || t.Before(s.runEnd) {
				s.next = t
				if !s.stop.IsZero() && !t.Before(s.stop) {
					s.next = time.Time{}
				}
				return
			}
		}
		if s.runEnd.IsZero() || (!s.stop.IsZero() && !s.runEnd.Before(s.stop)) {
			s.next = time.Time{}
			return
		}
		rate := s.changes[s.change].chatsPerSecond
		s.change++
		s.startRun(s.runEnd, rate)
	}
}

// due: a chat's intended time has come by now.
func (s *chatSchedule) due(now time.Time) bool {
	return !s.next.IsZero() && !s.next.After(now)
}

// advance moves to the chat after next.
func (s *chatSchedule) advance() {
	s.k++
	s.settle()
}

// end drops every chat still to come (the client leaves or its session ended).
func (s *chatSchedule) end() {
	s.next = time.Time{}
}

// countDue is how many intended times from next on are no later than now.
func (s chatSchedule) countDue(now time.Time) int {
	n := 0
	for ; s.due(now); s.advance() {
		n++
	}
	return n
}

// holdLog is when the server held a client up: the wait for its join's
// acknowledgement and every write (a write that blocks is a server that does
// not read). held(t) is how much of the time up to t the client was held, so
// held(b) - held(a) is the server's part of [a, b); the rest is the client's
// own time: its timer and its CPU.
type holdLog struct {
	holds []hold
	// total is the held time of every hold, pruned ones included.
	total time.Duration
}

type hold struct {
	from, until time.Time
	// before is the held time before from.
	before time.Duration
}

// add records that the client was held over [from, until). Holds come in
// time order; the part of one that overlaps the last is not counted twice.
func (l *holdLog) add(from, until time.Time) {
	if n := len(l.holds); n > 0 && from.Before(l.holds[n-1].until) {
		from = l.holds[n-1].until
	}
	if !until.After(from) {
		return
	}
	l.holds = append(l.holds, hold{from: from, until: until, before: l.total})
	l.total += until.Sub(from)
}

// held is how much of the time up to t the client was held. Exact for any t
// no earlier than the last prune.
func (l *holdLog) held(t time.Time) time.Duration {
	for i := len(l.holds) - 1; i >= 0; i-- {
		h := l.holds[i]
		if h.from.Before(t) {
			if t.Before(h.until) {
				return h.before + t.Sub(h.from)
			}
			return h.before + h.until.Sub(h.from)
		}
	}
	if len(l.holds) > 0 {
		return l.holds[0].before
	}
	return l.total
}

// prune forgets the holds that ended by t: held is never asked about earlier
// times again (t is the oldest chat still to be sent).
func (l *holdLog) prune(t time.Time) {
	i := 0
	for i < len(l.holds) && !l.holds[i].until.After(t) {
		i++
	}
	if i > 0 {
		l.holds = append(l.holds[:0], l.holds[i:]...)
	}
}

// cause is why a chat went out late or not at all.
type cause int

const (
	// onTime: written within lateAfter of its intended time.
	onTime cause = iota
	// lateJoin: the server had not acknowledged the join yet (the wait
	// includes connecting): the server's fault.
	lateJoin
	// lateWrite: a write was blocked, the server not reading: the server's fault.
	lateWrite
	// lateTimer: the client itself was late, its write path free (its timer
	// fired late, or it was short of CPU): the load generator's fault.
	lateTimer
)

// lateness is how late a chat intended at intended went out at sent (or was
// declared missed at sent): server is the part the server held the client,
// split into its join and write parts; the rest is the client's own.
type lateness struct {
	total, server, join time.Duration
}

// lateBy splits [intended, at) by l, joinedAt being when the join was
// acknowledged (every hold before it is the join wait).
func (l *holdLog) lateBy(intended, at, joinedAt time.Time) lateness {
	if !at.After(intended) {
		return lateness{}
	}
	x := lateness{total: at.Sub(intended), server: l.held(at) - l.held(intended)}
	if intended.Before(joinedAt) {
		x.join = l.held(earlier(joinedAt, at)) - l.held(intended)
	}
	return x
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// cause is the largest of a late chat's three parts: the join wait, blocked
// writes, the client's own time. Ties go to the server.
func (x lateness) cause() cause {
	if x.total < lateAfter {
		return onTime
	}
	write, own := x.server-x.join, x.total-x.server
	switch {
	case x.join >= write && x.join >= own:
		return lateJoin
	case write >= own:
		return lateWrite
	default:
		return lateTimer
	}
}
