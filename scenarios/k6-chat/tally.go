package chat

// tally.go owns what the clients count, at three levels, so that no frame
// costs more than a few local increments:
//
//   - readBatch: one reader goroutine's counts and latencies, handed on every
//     batchValues latencies or batchAge;
//   - tally: one VU's counts (atomics), a bounded uniform sample of its
//     latencies for k6's chat_latency Trend, and its sessions' connect times;
//     drained into k6 samples and into the totals every flush;
//   - totals: the process-wide counts and the HDR histograms (service time,
//     response time, missed chats), which report() returns, and the same per
//     step and per period (windows.go).
//
// The controller (the client's writer) counts its chats by how they went out
// (schedule.go's causes) straight into the tally's atomics, and hands the
// missed ones' held times to the totals as they happen: a few per stall, not
// per message.

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
	// Every chat the schedule meant to send, once it was sent or missed:
	// chats_intended = the sent ones by cause + the missed ones by cause, and
	// chat_sent = the sent ones by cause.
	cChatsIntended
	cChatsOnTime
	cChatsLateJoin
	cChatsLateWrite
	cChatsLateTimer
	cChatsMissedJoin
	cChatsMissedWrite
	cChatsMissedTimer
	cPingsSent
	cPongsReceived
	numCounters
)

// counterNames are the keys of report()'s "counters".
var counterNames = [numCounters]string{
	"sessions", "sessions_closed", "connect_errors", "abnormal_closes", "ws_errors",
	"chat_sent", "chat_received", "msgs_sent", "msgs_received", "malformed",
	"chats_intended", "chats_sent_on_time", "chats_sent_late_join", "chats_sent_late_write", "chats_sent_late_timer",
	"chats_missed_join", "chats_missed_write", "chats_missed_timer",
	"pings_sent", "pongs_received",
}

// sentBy and missedBy are the counters of a chat sent or missed for a cause.
// A chat missed while still on time (its session ended at its moment) was
// not held by the server: it counts as the client's own, with the timer's.
var (
	sentBy   = [...]counter{onTime: cChatsOnTime, lateJoin: cChatsLateJoin, lateWrite: cChatsLateWrite, lateTimer: cChatsLateTimer}
	missedBy = [...]counter{onTime: cChatsMissedTimer, lateJoin: cChatsMissedJoin, lateWrite: cChatsMissedWrite, lateTimer: cChatsMissedTimer}
)

// The histograms kept by the totals and by every window, all in µs with the
// settings below:
//   - hService: service time, receive time minus the moment the chat was
//     written (report's latency_us; what it always was);
//   - hResponse: response time, receive time minus the chat's intended time
//     less the load generator's own lateness (see schedule.go);
//   - hMissed: one value per chat missed by the server's fault (join or
//     write), the time the server had held it when it was declared missed.
//     report() weighs it into the response time (see missedWeight).
const (
	hService = iota
	hResponse
	hMissed
	// hPong: one value per pong received, receive time minus its ping's
	// intended time (see "Heartbeats" in client.go).
	hPong
	numHists
)

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
	hists  [numHists]*hdrhistogram.Histogram
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
	// handshakes: what each session negotiated, and why connects failed.
	handshakes handshakes
	// slow: the slow clients' closes and pauses (slow.go), in the totals
	// that count slow clients.
	slow slowLog
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
		hists:    [numHists]*hdrhistogram.Histogram{newHistogram(), newHistogram(), newHistogram(), newHistogram()},
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

// record adds a reader's batch: the service and response times of the chats
// it timed (pairwise) and how many chats it received, the last of them at at
// (a batch never spans a window's edge: see readBatch.edge), so a window
// holds exactly the chats received inside it.
func (t *totals) record(at time.Time, serviceUs, responseUs []int64, chats int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := at
	for i := range serviceUs {
		_ = t.hists[hService].RecordValue(serviceUs[i]) // clamped, so always in range
		_ = t.hists[hResponse].RecordValue(responseUs[i])
	}
	t.periods.record(now, serviceUs, responseUs, chats)
	t.stepSet.record(now, serviceUs, responseUs, chats)
}

// recordMissed adds the held times of chats a controller declared missed.
func (t *totals) recordMissed(heldUs []int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, v := range heldUs {
		_ = t.hists[hMissed].RecordValue(v)
	}
	t.periods.recordMissed(now, heldUs)
	t.stepSet.recordMissed(now, heldUs)
}

// countAt puts one chat's counters into the window at at, the moment the
// controller sent or missed it. The tally's drain adds them to the totals'
// counts but, being every flushPeriod, would put them in the window of the
// drain; chats are few (a delivery is many), so each takes the lock here.
func (t *totals) countAt(at time.Time, cs ...counter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, set := range []*windowSet{t.periods, t.stepSet} {
		if acc := set.at(at); acc != nil {
			for _, c := range cs {
				acc.counts[c]++
			}
		}
	}
}

// nextEdge is the first window edge (a period's or a step's) after from: a
// reader's batch is flushed before it, so no batch straddles two windows.
func (t *totals) nextEdge(from time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	ms := t.period.Milliseconds()
	edge := time.UnixMilli((from.UnixMilli()/ms + 1) * ms)
	for _, st := range t.steps {
		for _, e := range []time.Time{st.from, st.to} {
			if e.After(from) && e.Before(edge) {
				edge = e
			}
		}
	}
	return edge
}

// recordPong adds one pong's latency.
func (t *totals) recordPong(us int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	_ = t.hists[hPong].RecordValue(us)
	t.periods.recordHist(now, hPong, []int64{us})
	t.stepSet.recordHist(now, hPong, []int64{us})
}

// missedWeight is how many response-time samples a missed chat stands for:
// the timed deliveries per chat sent so far. A chat that was sent reaches
// every other member of the room, and every probe among them times it; one
// that was missed would have too. Without anything delivered, 1.
func (t *totals) missedWeight() float64 {
	timed, sent := t.hists[hService].TotalCount(), t.counts[cChatSent]
	if timed == 0 || sent == 0 {
		return 1
	}
	return float64(timed) / float64(sent)
}

// withMissed is a response-time histogram with the missed chats weighed in:
// each bucket of missed values counts weight times (rounded, at least once).
func withMissed(response, missed LatencyHistogram, weight float64) LatencyHistogram {
	if len(missed.Buckets) == 0 {
		return response
	}
	h := response.Histogram()
	for _, b := range missed.Buckets {
		_ = h.RecordValues(b[0], max(1, int64(math.Round(float64(b[1])*weight))))
	}
	return histogramReport(h)
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
	return stepStats(t.steps[i], t.stepSet.accs[int64(i)], t.missedWeight()), true
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
	// serviceUs[i] and responseUs[i] are one chat's two latencies.
	serviceUs  []int64
	responseUs []int64
	crossUs    []int64
	last       time.Time
	// lastRecv is when the batch's latest frame was received; edge the first
	// window edge after its first (zero while the batch is empty).
	lastRecv time.Time
	edge     time.Time
}

func newReadBatch(t *tally) *readBatch {
	return &readBatch{t: t, serviceUs: make([]int64, 0, batchValues), responseUs: make([]int64, 0, batchValues), last: time.Now()}
}

// crossLatency keeps a latency of a chat from another instance: it goes to
// the totals' separate histogram only, never into k6's chat_latency Trend.
func (b *readBatch) crossLatency(us float64) {
	b.crossUs = append(b.crossUs, clampUs(int64(math.Round(us))))
	if len(b.crossUs) == batchValues {
		b.flush()
	}
}

// latency keeps one chat's service and response times.
func (b *readBatch) latency(serviceUs, responseUs float64) {
	b.serviceUs = append(b.serviceUs, clampUs(int64(math.Round(serviceUs))))
	b.responseUs = append(b.responseUs, clampUs(int64(math.Round(responseUs))))
	if len(b.serviceUs) == batchValues {
		b.flush()
	}
}

// frameAt is called before a frame received at now is counted: a batch whose
// window has ended is flushed first, and a new batch learns its window's edge.
func (b *readBatch) frameAt(now time.Time) {
	if !b.edge.IsZero() && !now.Before(b.edge) {
		b.flush()
	}
	if b.edge.IsZero() {
		b.edge = b.t.totals.nextEdge(now)
	}
	b.lastRecv = now
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
	if len(b.serviceUs) > 0 || chats > 0 {
		at := b.lastRecv
		if at.IsZero() {
			at = time.Now()
		}
		b.t.totals.record(at, b.serviceUs, b.responseUs, chats)
	}
	b.edge = time.Time{}
	if len(b.serviceUs) > 0 {
		// k6's chat_latency Trend keeps its meaning: service time.
		b.t.sample(b.serviceUs)
		b.serviceUs, b.responseUs = b.serviceUs[:0], b.responseUs[:0]
	}
	if len(b.crossUs) > 0 {
		b.t.totals.recordCross(b.crossUs)
		b.crossUs = b.crossUs[:0]
	}
}
