package chat

// slow.go owns the slow readers of the slow-consumers scenario: session()'s
// `slow` option (a small receive buffer and a window in which the reader
// stops reading), the pause itself, how a slow client tells that the server
// closed or dropped it, and report()'s "slow" object. A slow client never
// chats and never times a chat; everything it counts goes to its own totals
// (the module keeps them apart from the healthy clients'), so the healthy
// histograms, periods and counters, and k6's metrics, are the healthy
// clients' only.

import (
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/grafana/sobek"

	"go.k6.io/k6/js/common"
)

// slowOptions is session()'s `slow` option.
type slowOptions struct {
	// recvBufferBytes is the socket's SO_RCVBUF, set before connecting (so
	// the window the client advertises is small from the start); 0 keeps the
	// kernel's default.
	recvBufferBytes int
	// maxSegmentBytes is the TCP MSS the client announces (TCP_MAXSEG,
	// before connecting); 0 keeps the kernel's. On loopback the MSS is about
	// 64 KB, and Linux sizes a new connection's send buffer from ten
	// segments (about 1.3 MB here), so a server's kernel alone would hold
	// over ten thousand chats for a paused client before its queue saw any;
	// with an Ethernet MSS (1460) it holds what it would for a remote one.
	maxSegmentBytes int
	// The reader stops reading at pauseFrom and starts again at pauseUntil,
	// then reads as fast as it can. Both zero: it never pauses.
	pauseFrom, pauseUntil time.Time
}

// The bounds of recvBufferBytes (Linux doubles what it is given and keeps at
// least 2,304 bytes).
const (
	minRecvBuffer = 1024
	maxRecvBuffer = 64 << 20
)

// slowPollEvery is how often a paused reader looks at its connection's TCP
// state, to note when the server closed or dropped it.
const slowPollEvery = 50 * time.Millisecond

var slowOptionNames = []string{"recvBufferBytes", "maxSegmentBytes", "pauseFromMs", "pauseUntilMs"}

// The bounds of maxSegmentBytes (Linux clamps below 88 and above 32767).
const (
	minSegment = 536
	maxSegment = 32767
)

// parseSlow reads the `slow` option object, nil when absent.
func parseSlow(rt *sobek.Runtime, obj *sobek.Object) (*slowOptions, error) {
	v := obj.Get("slow")
	if common.IsNullish(v) {
		return nil, nil
	}
	so, ok := v.Export().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("chat.session: slow must be an object {%v}, got %q", slowOptionNames, v.String())
	}
	for k := range so {
		if !contains(slowOptionNames, k) {
			return nil, fmt.Errorf("chat.session: unknown slow option %q (known: %s)", k, strings.Join(slowOptionNames, ", "))
		}
	}
	s := v.ToObject(rt)
	number := func(name string) (float64, bool, error) {
		val := s.Get(name)
		if common.IsNullish(val) {
			return 0, false, nil
		}
		switch x := val.Export().(type) {
		case int64:
			return float64(x), true, nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, false, fmt.Errorf("chat.session: slow.%s must be a finite number, got %v", name, x)
			}
			return x, true, nil
		default:
			return 0, false, fmt.Errorf("chat.session: slow.%s must be a number, got %q", name, val.String())
		}
	}
	var o slowOptions
	n, ok, err := number("recvBufferBytes")
	if err != nil {
		return nil, err
	}
	if ok {
		if n != math.Trunc(n) || n < minRecvBuffer || n > maxRecvBuffer {
			return nil, fmt.Errorf("chat.session: slow.recvBufferBytes must be an integer from %d to %d, got %v", minRecvBuffer, maxRecvBuffer, n)
		}
		o.recvBufferBytes = int(n)
	}
	n, ok, err = number("maxSegmentBytes")
	if err != nil {
		return nil, err
	}
	if ok {
		if n != math.Trunc(n) || n < minSegment || n > maxSegment {
			return nil, fmt.Errorf("chat.session: slow.maxSegmentBytes must be an integer from %d to %d, got %v", minSegment, maxSegment, n)
		}
		o.maxSegmentBytes = int(n)
	}
	from, hasFrom, err1 := number("pauseFromMs")
	until, hasUntil, err2 := number("pauseUntilMs")
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if hasFrom != hasUntil {
		return nil, errors.New("chat.session: slow needs both pauseFromMs and pauseUntilMs, or neither")
	}
	if hasFrom {
		if from <= 0 || until <= from {
			return nil, fmt.Errorf("chat.session: slow needs 0 < pauseFromMs < pauseUntilMs (epoch ms), got %v and %v", from, until)
		}
		o.pauseFrom, o.pauseUntil = time.UnixMilli(int64(from)), time.UnixMilli(int64(until))
	}
	return &o, nil
}

// pauseReading is the reader's pause: from the first read at or after
// pauseFrom until pauseUntil it reads nothing, so the socket's small buffer
// fills and the server's queue for this client with it. Every slowPollEvery
// it looks at the connection's TCP state and notes the first moment it saw
// the server close or drop it (the reader itself sees that only once it
// reads again). It returns early when the controller ends the session.
func (s *session) pauseReading() {
	p := s.slow
	if p == nil || s.pausedDone || p.pauseUntil.IsZero() || time.Now().Before(p.pauseFrom) {
		return
	}
	s.pausedDone = true
	start := time.Now()
	for now := start; now.Before(p.pauseUntil) && !s.ending.Load(); now = time.Now() {
		if s.closedSeenAt.IsZero() && !tcpEstablished(s.rc.Conn) {
			s.closedSeenAt = now
		}
		time.Sleep(min(slowPollEvery, p.pauseUntil.Sub(now)))
	}
	s.pausedFor = time.Since(start)
	// The read deadline runs from the last read: not from before the pause.
	s.rc.lastRead = time.Now()
}

// closedByServer says whether the server closed or dropped a slow client
// before its own leave (or close), and when the client first saw it. Called
// by the controller after the reader ended.
func (s *session) closedByServer() (time.Time, bool) {
	at := s.readEndedAt
	if !s.closedSeenAt.IsZero() && s.closedSeenAt.Before(at) {
		at = s.closedSeenAt
	}
	if at.IsZero() || (!s.leftAt.IsZero() && !at.Before(s.leftAt)) {
		return time.Time{}, false
	}
	return at, true
}

// slowLog is what a totals holding slow clients keeps besides the counters:
// when the server closed each one it closed, and the longest pause.
type slowLog struct {
	mu        sync.Mutex
	closedAt  []time.Time
	maxPaused time.Duration
	// firstStart is the earliest session start, the clock closedAt counts
	// from when the script set no startMs.
	firstStart time.Time
}

func (l *slowLog) started(at time.Time) {
	l.mu.Lock()
	if l.firstStart.IsZero() || at.Before(l.firstStart) {
		l.firstStart = at
	}
	l.mu.Unlock()
}

func (l *slowLog) ended(paused time.Duration, closedAt time.Time, closed bool) {
	l.mu.Lock()
	l.maxPaused = max(l.maxPaused, paused)
	if closed {
		l.closedAt = append(l.closedAt, closedAt)
	}
	l.mu.Unlock()
}

// SlowReport is report()'s "slow" object: the slow clients' own counts.
type SlowReport struct {
	// Clients is the slow sessions started (connect attempts).
	Clients int64 `json:"clients"`
	// Received is the chats they received, all told.
	Received int64 `json:"received"`
	// ClosedByServer is the slow clients the server closed or dropped (a
	// close frame from it, or the connection ended) before their own leave.
	ClosedByServer int64 `json:"closed_by_server"`
	// ClosedAtMs is, for each of those, ascending, when the client first saw
	// it, in ms since StartMs: its TCP state left ESTABLISHED while paused,
	// or its reader ended.
	ClosedAtMs []int64 `json:"closed_at_ms"`
	// Errors is failed connects plus sessions that ended abnormally other
	// than by the server closing them before their leave.
	Errors int64 `json:"errors"`
	// ReadPausedMs is the longest a slow reader actually stopped reading.
	ReadPausedMs int64 `json:"read_paused_ms"`
	// StartMs is the epoch ms ClosedAtMs counts from: the test's start as the
	// script gave it (chat.schedule's startMs), else the first slow session's.
	StartMs int64 `json:"start_ms"`
}

// slowReport is t's slow clients as report()'s "slow" object, nil when it
// had none; start (zero: the first session's start) is the clock's origin.
func (t *totals) slowReport(start time.Time) *SlowReport {
	t.mu.Lock()
	counts := t.counts
	t.mu.Unlock()
	l := &t.slow
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.firstStart.IsZero() {
		return nil // no slow client ever started here
	}
	if start.IsZero() {
		start = l.firstStart
	}
	r := &SlowReport{
		Clients:        counts[cSessions],
		Received:       counts[cChatReceived],
		ClosedByServer: int64(len(l.closedAt)),
		ClosedAtMs:     make([]int64, 0, len(l.closedAt)),
		Errors:         counts[cConnectErrors] + counts[cAbnormalCloses],
		ReadPausedMs:   l.maxPaused.Milliseconds(),
		StartMs:        start.UnixMilli(),
	}
	for _, at := range l.closedAt {
		r.ClosedAtMs = append(r.ClosedAtMs, at.Sub(start).Milliseconds())
	}
	slices.Sort(r.ClosedAtMs)
	return r
}

// tcpConnOf is the TCP connection under c, if there is one.
func tcpConnOf(c net.Conn) (syscall.RawConn, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, false
	}
	raw, err := sc.SyscallConn()
	return raw, err == nil
}
