package chat

// windows.go owns the per-window aggregates report() carries beside the
// totals: the same counters and an HDR latency histogram for each step of a
// stepped scenario (capacity), and for each fixed-length period of any run
// (soak KPIs need latency per interval), with the same histograms as the
// totals (tally.go's hService, hResponse, hMissed). A window's counts are what the VUs
// flushed while it was current (flushes come every flushPeriod), except its
// chats received and its latencies: those are what the readers recorded while
// it was current (batches are at most batchAge old), so a step's received
// chats and its latencies share the readers' clock. Only the current window keeps a live histogram; a window that has
// passed keeps its buckets only, so a 30-minute soak costs kilobytes per
// period, not a histogram each.

import (
	"sort"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// defaultPeriod is the length of the periodic windows when the script sets
// none (chat.schedule's periodMs).
const defaultPeriod = 10 * time.Second

// maxSteps bounds the step schedule.
const maxSteps = 1000

// step is one window of a step schedule, [from, to).
type step struct {
	clients  int
	from, to time.Time
}

// countedAt are the counters a window gets at the moment of each event, not
// at the tally's drain: chats received (by the readers' batches) and each
// chat sent or missed (totals.countAt), so a window of a few seconds counts
// exactly what happened inside it.
var countedAt = func() (m [numCounters]bool) {
	for _, c := range []counter{
		cChatReceived, cChatSent, cChatsIntended, cChatsOnTime, cChatsLateJoin, cChatsLateWrite,
		cChatsLateTimer, cChatsMissedJoin, cChatsMissedWrite, cChatsMissedTimer,
	} {
		m[c] = true
	}
	return m
}()

// windowAcc is one window's counts and latencies.
type windowAcc struct {
	counts [numCounters]int64
	// live are the histograms (hService, ...) while the window is current;
	// buckets once it is not.
	live    [numHists]*hdrhistogram.Histogram
	buckets [numHists]LatencyHistogram
	closed  bool
}

func newWindowAcc() *windowAcc {
	a := &windowAcc{}
	for h := range a.live {
		a.live[h] = newHistogram()
	}
	return a
}

func (a *windowAcc) record(h int, latenciesUs []int64) {
	if a.closed {
		// A late batch for a window that has passed (rare: clocks read before
		// the lock): reopen it.
		for i := range a.live {
			a.live[i] = a.buckets[i].Histogram()
		}
		a.closed = false
	}
	for _, v := range latenciesUs {
		_ = a.live[h].RecordValue(v)
	}
}

func (a *windowAcc) close() {
	if !a.closed {
		for i := range a.live {
			a.buckets[i], a.live[i] = histogramReport(a.live[i]), nil
		}
		a.closed = true
	}
}

func (a *windowAcc) histogram(h int) LatencyHistogram {
	if a.closed {
		return a.buckets[h]
	}
	return histogramReport(a.live[h])
}

// windowSet is one way of cutting time into windows: key gives the window a
// moment belongs to, or false when it belongs to none.
type windowSet struct {
	key     func(time.Time) (int64, bool)
	accs    map[int64]*windowAcc
	current int64
	hasCur  bool
}

func newWindowSet(key func(time.Time) (int64, bool)) *windowSet {
	return &windowSet{key: key, accs: map[int64]*windowAcc{}}
}

func (w *windowSet) at(now time.Time) *windowAcc {
	k, ok := w.key(now)
	if !ok {
		return nil
	}
	if w.hasCur && w.current != k {
		if prev := w.accs[w.current]; prev != nil {
			prev.close()
		}
	}
	w.current, w.hasCur = k, true
	acc := w.accs[k]
	if acc == nil {
		acc = newWindowAcc()
		w.accs[k] = acc
	}
	return acc
}

// record adds a reader's batch: its latencies and the chats it received
// (chats, unlike the other counters, go to windows on the readers' clock).
func (w *windowSet) record(now time.Time, serviceUs, responseUs []int64, chats int64) {
	if acc := w.at(now); acc != nil {
		acc.record(hService, serviceUs)
		acc.record(hResponse, responseUs)
		acc.counts[cChatReceived] += chats
	}
}

// recordMissed adds missed chats' held times, in the window they were
// declared missed in.
func (w *windowSet) recordMissed(now time.Time, heldUs []int64) {
	w.recordHist(now, hMissed, heldUs)
}

// recordHist adds values to histogram h of the window now belongs to.
func (w *windowSet) recordHist(now time.Time, h int, values []int64) {
	if acc := w.at(now); acc != nil {
		acc.record(h, values)
	}
}

func (w *windowSet) addCounts(now time.Time, d *[numCounters]int64) {
	if acc := w.at(now); acc != nil {
		for i, n := range d {
			if !countedAt[counter(i)] {
				acc.counts[i] += n
			}
		}
	}
}

// keys are the windows seen, ascending.
func (w *windowSet) keys() []int64 {
	keys := make([]int64, 0, len(w.accs))
	for k := range w.accs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// periodKey: periods are aligned to multiples of period since the epoch, so
// several k6 instances cut time the same way and their windows merge.
func periodKey(period time.Duration) func(time.Time) (int64, bool) {
	ms := period.Milliseconds()
	return func(now time.Time) (int64, bool) {
		return now.UnixMilli() / ms, true
	}
}

// stepKey: the index of the step now falls in.
func stepKey(steps []step) func(time.Time) (int64, bool) {
	return func(now time.Time) (int64, bool) {
		i := sort.Search(len(steps), func(i int) bool { return now.Before(steps[i].to) })
		if i < len(steps) && !now.Before(steps[i].from) {
			return int64(i), true
		}
		return 0, false
	}
}

// WindowReport is one window of report()'s "steps" or "periods".
type WindowReport struct {
	// Clients is the step's planned number of clients (steps only).
	Clients  int              `json:"clients,omitempty"`
	FromMs   int64            `json:"from_ms"`
	ToMs     int64            `json:"to_ms"`
	Counters map[string]int64 `json:"counters"`
	// LatencyUs and ResponseTimeUs are the report's two histograms (the same
	// settings, the same meaning) for what was received in the window; the
	// missed chats weighed into ResponseTimeUs are those declared missed in it.
	LatencyUs      LatencyHistogram `json:"latency_us"`
	ResponseTimeUs LatencyHistogram `json:"response_time_us"`
	// PongLatencyUs is the report's pong histogram for the pongs received
	// in the window.
	PongLatencyUs LatencyHistogram `json:"pong_latency_us"`
}

// windowReport is a window's figures; missedWeight as in totals.missedWeight.
func windowReport(a *windowAcc, from, to int64, clients int, missedWeight float64) WindowReport {
	r := WindowReport{Clients: clients, FromMs: from, ToMs: to, Counters: make(map[string]int64, numCounters)}
	if a == nil {
		r.LatencyUs = histogramReport(newHistogram())
		r.ResponseTimeUs = r.LatencyUs
		r.PongLatencyUs = r.LatencyUs
	} else {
		r.LatencyUs = a.histogram(hService)
		r.ResponseTimeUs = withMissed(a.histogram(hResponse), a.histogram(hMissed), missedWeight)
		r.PongLatencyUs = a.histogram(hPong)
	}
	for i := range numCounters {
		if a != nil {
			r.Counters[counterNames[i]] = a.counts[i]
		} else {
			r.Counters[counterNames[i]] = 0
		}
	}
	return r
}

// StepStats is what chat.stepStats(i) tells a script about step i so far, so
// it can stop the test when a step breaks.
// The latency figures are service time (what they always were); the
// response-time ones are from the intended time, missed chats included.
type StepStats struct {
	Clients      int     `json:"clients"`
	FromMs       int64   `json:"from_ms"`
	ToMs         int64   `json:"to_ms"`
	ChatSent     int64   `json:"chat_sent"`
	ChatReceived int64   `json:"chat_received"`
	Errors       int64   `json:"errors"`
	LatencyCount int64   `json:"latency_count"`
	LatencyP95Ms float64 `json:"latency_p95_ms"`
	LatencyMaxMs float64 `json:"latency_max_ms"`
	// ChatsIntended and ChatsMissed: see the counters of the same names.
	ChatsIntended     int64   `json:"chats_intended"`
	ChatsMissed       int64   `json:"chats_missed"`
	ResponseTimeP95Ms float64 `json:"response_time_p95_ms"`
	ResponseTimeMaxMs float64 `json:"response_time_max_ms"`
}

func stepStats(s step, a *windowAcc, missedWeight float64) StepStats {
	st := StepStats{Clients: s.clients, FromMs: s.from.UnixMilli(), ToMs: s.to.UnixMilli()}
	if a == nil {
		return st
	}
	st.ChatSent = a.counts[cChatSent]
	st.ChatReceived = a.counts[cChatReceived]
	st.Errors = a.counts[cConnectErrors] + a.counts[cAbnormalCloses] + a.counts[cWsErrors]
	st.ChatsIntended = a.counts[cChatsIntended]
	st.ChatsMissed = a.counts[cChatsMissedJoin] + a.counts[cChatsMissedWrite] + a.counts[cChatsMissedTimer]
	h := a.histogram(hService).Histogram()
	st.LatencyCount = h.TotalCount()
	st.LatencyP95Ms = float64(h.ValueAtQuantile(95)) / 1000
	st.LatencyMaxMs = float64(h.Max()) / 1000
	r := withMissed(a.histogram(hResponse), a.histogram(hMissed), missedWeight).Histogram()
	st.ResponseTimeP95Ms = float64(r.ValueAtQuantile(95)) / 1000
	st.ResponseTimeMaxMs = float64(r.Max()) / 1000
	return st
}
