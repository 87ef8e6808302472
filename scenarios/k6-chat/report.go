package chat

// report.go owns report()'s document: this k6 process's totals in a form
// that merges exactly across processes. Counts add; each latency histogram is
// every non-empty HDR bucket as [highest equivalent value, count], so
// recording each bucket's value count times into a histogram with the same
// settings rebuilds it bucket for bucket, and the histograms of several k6
// instances merge without averaging percentiles.

import (
	"encoding/json"
	"os"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// reportFormat names the document's layout; bump it when a field changes meaning.
const reportFormat = "wscbench-native/1"

// Report is report()'s document.
type Report struct {
	Format string `json:"format"`
	// Instance is the host name of the machine (container) k6 ran on.
	Instance string `json:"instance"`
	// ProcessCPUNs is the user+system CPU time this k6 process used so far.
	ProcessCPUNs int64            `json:"process_cpu_ns"`
	Counters     map[string]int64 `json:"counters"`
	// LatencyUs is the service time of chats this instance sent itself, or
	// of every chat outside a split run, as its latency probes received them:
	// receive time minus the moment the chat was written (what latency_us
	// always meant).
	LatencyUs LatencyHistogram `json:"latency_us"`
	// ResponseTimeUs is the same chats' response time: receive time minus
	// the chat's intended time, less the load generator's own lateness (see
	// schedule.go), plus the chats the server made the client miss, each
	// counted MissedChatWeight times at the time the server had held it
	// (added to format 1 without a bump: latency_us keeps its meaning, and
	// readers that do not know this field ignore it).
	ResponseTimeUs LatencyHistogram `json:"response_time_us"`
	// PongLatencyUs is every pong's latency from its ping's intended time
	// (clients with pingEveryMs; see "Heartbeats" in client.go). Added to
	// format 1 without a bump: empty where no client pinged.
	PongLatencyUs LatencyHistogram `json:"pong_latency_us"`
	// MissedChatWeight is how many response-time samples each missed chat
	// counts for: the timed deliveries per chat sent (see
	// totals.missedWeight).
	MissedChatWeight float64 `json:"missed_chat_weight"`
	// LatencyProbeEvery: one client in this many was a latency probe, which
	// timed the chats it received (1: every client). See "Latency probes" in
	// client.go.
	LatencyProbeEvery int `json:"latency_probe_every"`
	// InstanceID is this instance's number in a split run (1..N), 0 outside one.
	InstanceID int `json:"instance_id"`
	// CrossLatencyUs is the service time of chats other instances of a split
	// run sent: it includes the offset between their hosts' clocks.
	CrossLatencyUs LatencyHistogram `json:"cross_instance_latency_us"`
	// PeriodMs is the length of every window in Periods.
	PeriodMs int64 `json:"period_ms"`
	// Periods are the fixed-length windows in which anything was counted,
	// ascending (added to format 1 without a bump: readers that do not
	// know it ignore it).
	Periods []WindowReport `json:"periods"`
	// Steps are the windows of the step schedule the script set (see
	// chat.schedule), every step, counted or not; empty without one.
	Steps []WindowReport `json:"steps"`
	// Negotiated is every distinct outcome of the sessions' handshakes (TLS
	// version and cipher suite, the server's permessage-deflate answer) with
	// how many sessions had it, most first (added to format 1 without a bump,
	// like periods).
	Negotiated []negotiation `json:"negotiated"`
	// ConnectErrorReasons counts the failed connects by reason (see
	// transport.go); they add up to counters.connect_errors.
	ConnectErrorReasons map[string]int64 `json:"connect_error_reasons"`
	// Slow is the slow readers' own counts (slow.go), null when the process
	// ran none: nothing of theirs is in the counters, histograms or windows
	// above (added to format 1 without a bump: a reader that does not know
	// it reads a run without slow clients).
	Slow *SlowReport `json:"slow"`
}

// LatencyHistogram is an HDR histogram of chat latencies in microseconds.
type LatencyHistogram struct {
	LowestTrackableUs  int64 `json:"lowest_trackable_us"`
	HighestTrackableUs int64 `json:"highest_trackable_us"`
	SignificantFigures int   `json:"significant_figures"`
	TotalCount         int64 `json:"total_count"`
	// Buckets are [highest equivalent value µs, count], non-empty buckets only, ascending.
	Buckets [][2]int64 `json:"buckets"`
}

func (t *totals) report() Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	weight := t.missedWeight()
	r := Report{
		Format:            reportFormat,
		ProcessCPUNs:      processCPUNs(),
		Counters:          make(map[string]int64, numCounters),
		LatencyUs:         histogramReport(t.hists[hService]),
		ResponseTimeUs:    withMissed(histogramReport(t.hists[hResponse]), histogramReport(t.hists[hMissed]), weight),
		PongLatencyUs:     histogramReport(t.hists[hPong]),
		MissedChatWeight:  weight,
		InstanceID:        t.instance,
		CrossLatencyUs:    histogramReport(t.cross),
		LatencyProbeEvery: t.sampling.probeEvery,
	}
	r.Instance, _ = os.Hostname()
	r.Negotiated, r.ConnectErrorReasons = t.handshakes.report()
	for i, n := range t.counts {
		r.Counters[counterNames[i]] = n
	}
	r.PeriodMs = t.period.Milliseconds()
	r.Periods = []WindowReport{}
	for _, k := range t.periods.keys() {
		r.Periods = append(r.Periods, windowReport(t.periods.accs[k], k*r.PeriodMs, (k+1)*r.PeriodMs, 0, weight))
	}
	r.Steps = []WindowReport{}
	for i, s := range t.steps {
		r.Steps = append(r.Steps, windowReport(t.stepSet.accs[int64(i)], s.from.UnixMilli(), s.to.UnixMilli(), s.clients, weight))
	}
	return r
}

func histogramReport(h *hdrhistogram.Histogram) LatencyHistogram {
	l := LatencyHistogram{
		LowestTrackableUs:  lowestTrackableUs,
		HighestTrackableUs: highestTrackableUs,
		SignificantFigures: significantFigures,
		TotalCount:         h.TotalCount(),
		Buckets:            [][2]int64{},
	}
	for _, bar := range h.Distribution() {
		if bar.Count > 0 {
			l.Buckets = append(l.Buckets, [2]int64{bar.To, bar.Count})
		}
	}
	return l
}

// Histogram rebuilds the histogram the report was taken from.
func (l LatencyHistogram) Histogram() *hdrhistogram.Histogram {
	h := hdrhistogram.New(l.LowestTrackableUs, l.HighestTrackableUs, l.SignificantFigures)
	l.AddTo(h)
	return h
}

// AddTo records the report's buckets into h (the merge of several reports).
func (l LatencyHistogram) AddTo(h *hdrhistogram.Histogram) {
	for _, b := range l.Buckets {
		_ = h.RecordValues(b[0], b[1])
	}
}

// jsValue is the report as plain maps, slices and float64s, which k6 hands to
// JavaScript as an ordinary object (JSON.stringify works on it).
func (r Report) jsValue() map[string]any {
	raw, err := json.Marshal(r)
	if err != nil {
		panic(err) // only plain fields: cannot fail
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		panic(err)
	}
	return v
}
