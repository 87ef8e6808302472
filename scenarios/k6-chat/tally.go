package chat

// tally.go owns what the clients count, at three levels, so that no frame
// costs more than a few local increments:
//
//   - readBatch: one reader goroutine's counts and latencies, handed on every
//     batchValues latencies or batchAge;
//   - tally: one VU's counts (atomics), a bounded uniform sample of its
//     latencies for k6's chat_latency Trend, and its sessions' connect times;
//     drained into k6 samples and into the totals every flush;
//   - totals: the process-wide counts and the HDR histogram of every latency,
//     which report() returns, and the same per step and per period
//     (windows.go).

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

type counter int

// The counters, in report order.
const (
	cSessions counter = iota
	cSessionsClosed
	cConnectErrors
	cAbnormalCloses
	cWsErrors
	cChatSent
	cChatReceived
	cMsgsSent
	cMsgsReceived
	cMalformed
	numCounters
)

// counterNames are the keys of report()'s "counters".
var counterNames = [numCounters]string{
	"sessions", "sessions_closed", "connect_errors", "abnormal_closes", "ws_errors",
	"chat_sent", "chat_received", "msgs_sent", "msgs_received", "malformed",
}

// The latency histogram's settings, part of the report so a reader can
// rebuild it exactly.
const (
	lowestTrackableUs  = 1
	highestTrackableUs = 60_000_000
	significantFigures = 3
)

// reservoirSize bounds the chat_latency samples one VU pushes per flush.
const reservoirSize = 50

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(lowestTrackableUs, highestTrackableUs, significantFigures)
}

// clampUs keeps a latency inside the histogram's range: a negative one (a
// sender's clock ahead of ours) is 0, one beyond 60 s is 60 s.
func clampUs(us int64) int64 {
	return min(max(us, 0), highestTrackableUs)
}

// totals is what report() returns: every VU's counts and latencies in this
// k6 process.
type totals struct {
	mu     sync.Mutex
	counts [numCounters]int64
	hist   *hdrhistogram.Histogram
	// cross holds the latencies of chats another instance of a split run
	// sent: they include the clock offset between the two hosts, so they are
	// kept apart from hist.
	cross *hdrhistogram.Histogram
	// instance is the number the sessions of this process were given (see
	// clientOptions.instance).
	instance int
	// sampling is how the clients time chats (see "Latency probes").
	sampling sampling
	// period is the length of the periodic windows; scheduled is set once
	// the script called chat.schedule (the first call wins).
	period    time.Duration
	periods   *windowSet
	steps     []step
	stepSet   *windowSet
	scheduled bool
	// now is the clock, replaceable in tests.
	now func() time.Time
}

// setSampling records how the clients time chats, for the report (the last
// session's; every session of a script passes the same).
func (t *totals) setSampling(s sampling) {
	t.mu.Lock()
	t.sampling = s
	t.mu.Unlock()
}

func (t *totals) setInstance(n int) {
	t.mu.Lock()
	t.instance = n
	t.mu.Unlock()
}

func newTotals() *totals {
	return &totals{
		hist:     newHistogram(),
		cross:    newHistogram(),
		period:   defaultPeriod,
		sampling: sampling{probeEvery: defaultProbeEvery},
		periods:  newWindowSet(periodKey(defaultPeriod)),
		stepSet:  newWindowSet(stepKey(nil)),
		now:      time.Now,
	}
}

// schedule sets the period length and the step schedule, once: every VU
// calls it with the same values (computed from the scenario's start), and
// only the first call counts. Windows recorded before it are discarded.
func (t *totals) schedule(period time.Duration, steps []step) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.scheduled {
		return
	}
	t.scheduled = true
	t.period, t.periods = period, newWindowSet(periodKey(period))
	t.steps, t.stepSet = steps, newWindowSet(stepKey(steps))
}

func (t *totals) recordCross(latenciesUs []int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range latenciesUs {
		_ = t.cross.RecordValue(v)
	}
}

func (t *totals) record(latenciesUs []int64, chats int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, v := range latenciesUs {
		_ = t.hist.RecordValue(v) // clamped, so always in range
	}
	t.periods.record(now, latenciesUs, chats)
	t.stepSet.record(now, latenciesUs, chats)
}

func (t *totals) addCounts(d *[numCounters]int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for i, n := range d {
		t.counts[i] += n
	}
	t.periods.addCounts(now, d)
	t.stepSet.addCounts(now, d)
}

// stepStats is step i so far; false when there is no such step.
func (t *totals) stepStats(i int) (StepStats, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i < 0 || i >= len(t.steps) {
		return StepStats{}, false
	}
	return stepStats(t.steps[i], t.stepSet.accs[int64(i)]), true
}

// sessionTiming is one session's connect (ws_connecting) or length (ws_session_duration).
type sessionTiming struct {
	at       time.Time
	duration time.Duration
}

// tally is one VU's counts between two flushes.
type tally struct {
	c      [numCounters]atomic.Int64
	totals *totals

	mu sync.Mutex
	// reservoir is a uniform sample of the latencies (µs) recorded since the
	// last drain; seen counts them all.
	reservoir  []int64
	seen       int64
	connecting []sessionTiming
	durations  []sessionTiming
}

func newTally(t *totals) *tally {
	return &tally{totals: t, reservoir: make([]int64, 0, reservoirSize)}
}

func (t *tally) add(c counter, n int64) {
	t.c[c].Add(n)
}

func (t *tally) sessionStarted(at time.Time, connecting time.Duration) {
	t.mu.Lock()
	t.connecting = append(t.connecting, sessionTiming{at, connecting})
	t.mu.Unlock()
}

func (t *tally) sessionEnded(start time.Time) {
	t.mu.Lock()
	t.durations = append(t.durations, sessionTiming{time.Now(), time.Since(start)})
	t.mu.Unlock()
}

// sample feeds latencies to the reservoir (Vitter's algorithm R).
func (t *tally) sample(latenciesUs []int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range latenciesUs {
		t.seen++
		if len(t.reservoir) < reservoirSize {
			t.reservoir = append(t.reservoir, v)
		} else if j := rand.Int64N(t.seen); j < reservoirSize {
			t.reservoir[j] = v
		}
	}
}

// drained is what one flush takes out of a tally.
type drained struct {
	counts     [numCounters]int64
	latencyUs  []int64
	connecting []sessionTiming
	durations  []sessionTiming
}

// drain takes everything counted since the last drain, adds the counts to the
// totals, and returns it for k6's samples.
func (t *tally) drain() drained {
	var d drained
	for i := range t.c {
		d.counts[i] = t.c[i].Swap(0)
	}
	t.totals.addCounts(&d.counts)
	t.mu.Lock()
	d.latencyUs = append([]int64(nil), t.reservoir...)
	t.reservoir, t.seen = t.reservoir[:0], 0
	d.connecting, t.connecting = t.connecting, nil
	d.durations, t.durations = t.durations, nil
	t.mu.Unlock()
	return d
}

// readBatch is one reader's counts and latencies not yet in its tally.
type readBatch struct {
	t                      *tally
	msgs, chats, malformed int64
	latencyUs              []int64
	crossUs                []int64
	last                   time.Time
}

func newReadBatch(t *tally) *readBatch {
	return &readBatch{t: t, latencyUs: make([]int64, 0, batchValues), last: time.Now()}
}

// crossLatency keeps a latency of a chat from another instance: it goes to
// the totals' separate histogram only, never into k6's chat_latency Trend.
func (b *readBatch) crossLatency(us float64) {
	b.crossUs = append(b.crossUs, clampUs(int64(math.Round(us))))
	if len(b.crossUs) == batchValues {
		b.flush()
	}
}

func (b *readBatch) latency(us float64) {
	b.latencyUs = append(b.latencyUs, clampUs(int64(math.Round(us))))
	if len(b.latencyUs) == batchValues {
		b.flush()
	}
}

func (b *readBatch) maybeFlush(now time.Time) {
	if now.Sub(b.last) >= batchAge {
		b.flush()
		b.last = now
	}
}

func (b *readBatch) flush() {
	chats := b.chats
	if b.msgs > 0 {
		b.t.add(cMsgsReceived, b.msgs)
		b.t.add(cChatReceived, b.chats)
		b.t.add(cMalformed, b.malformed)
		b.msgs, b.chats, b.malformed = 0, 0, 0
	}
	if len(b.latencyUs) > 0 || chats > 0 {
		b.t.totals.record(b.latencyUs, chats)
	}
	if len(b.latencyUs) > 0 {
		b.t.sample(b.latencyUs)
		b.latencyUs = b.latencyUs[:0]
	}
	if len(b.crossUs) > 0 {
		b.t.totals.recordCross(b.crossUs)
		b.crossUs = b.crossUs[:0]
	}
}
