package chat

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Two k6 instances' reports, merged by re-recording their buckets, are the
// histograms of all their samples: same counts, same percentiles, for the
// service time and for the response time with its missed chats.
func TestMergedReportsEqualOneHistogramOfAllSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := [2]*hdrhistogram.Histogram{newHistogram(), newHistogram()} // service, response
	halves := [2]*totals{newTotals(), newTotals()}
	for i := 0; i < 200_000; i++ {
		// Log-uniform from 1 µs to ~2 min: every bucket size, and some beyond the range.
		v := clampUs(int64(math.Exp(rng.Float64() * 18.6)))
		// A response time is the service time plus what the server held the chat.
		r := v
		if i%10 == 0 {
			r = clampUs(v + int64(math.Exp(rng.Float64()*15)))
		}
		_ = all[0].RecordValue(v)
		_ = all[1].RecordValue(r)
		halves[i%2].record(time.Now(), []int64{v}, []int64{r}, 1)
		if i%100 == 0 {
			// A missed chat: into the response time only (weight 1 here: no
			// chat_sent counted, as if none was delivered).
			m := clampUs(int64(math.Exp(rng.Float64() * 16)))
			_ = all[1].RecordValue(m)
			halves[i%2].recordMissed([]int64{m})
		}
	}
	merged := [2]*hdrhistogram.Histogram{newHistogram(), newHistogram()}
	for _, h := range halves {
		// Through JSON, as the orchestrator reads it.
		raw, err := json.Marshal(h.report())
		if err != nil {
			t.Fatal(err)
		}
		var r Report
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if r.Format != reportFormat || r.LatencyUs.HighestTrackableUs != highestTrackableUs || r.MissedChatWeight != 1 {
			t.Fatalf("report header = %+v", r)
		}
		r.LatencyUs.AddTo(merged[0])
		r.ResponseTimeUs.AddTo(merged[1])
	}
	for i, name := range []string{"service time", "response time"} {
		if merged[i].TotalCount() != all[i].TotalCount() {
			t.Fatalf("%s: merged total %d, all %d", name, merged[i].TotalCount(), all[i].TotalCount())
		}
		for _, q := range []float64{0, 1, 10, 50, 90, 95, 99, 99.9, 99.99, 100} {
			if a, b := merged[i].ValueAtQuantile(q), all[i].ValueAtQuantile(q); a != b {
				t.Errorf("%s p%v: merged %d, all %d", name, q, a, b)
			}
		}
		if !equalBuckets(merged[i], all[i]) {
			t.Errorf("%s: merged buckets differ from the buckets of all samples", name)
		}
	}
}

// A missed chat counts in the response time as many times as a sent chat was
// timed on average: in a room where every chat reaches ten probes, one
// missed chat weighs as much as one delivered to all ten.
func TestAMissedChatWeighsAsMuchAsTheDeliveriesItWouldHaveHad(t *testing.T) {
	tot := newTotals()
	tl := newTally(tot)
	tl.add(cChatSent, 100)
	tl.drain()
	for range 1000 { // 100 chats x 10 probes
		tot.record(time.Now(), []int64{500}, []int64{500}, 1)
	}
	tot.recordMissed([]int64{3_000_000, 3_000_000})
	r := tot.report()
	if r.MissedChatWeight != 10 {
		t.Fatalf("missed_chat_weight = %v, want 10", r.MissedChatWeight)
	}
	h := r.ResponseTimeUs.Histogram()
	if h.TotalCount() != 1020 || h.ValueAtQuantile(99) < 2_990_000 || h.ValueAtQuantile(97) > 1000 {
		t.Errorf("response time: %d samples, p97 %d µs, p99 %d µs; want 1000 at 500 µs and 2 x 10 at 3 s",
			h.TotalCount(), h.ValueAtQuantile(97), h.ValueAtQuantile(99))
	}
	if n := r.LatencyUs.TotalCount; n != 1000 {
		t.Errorf("service time samples = %d, want 1000 (a missed chat has none)", n)
	}
}

func equalBuckets(a, b *hdrhistogram.Histogram) bool {
	da, db := a.Distribution(), b.Distribution()
	if len(da) != len(db) {
		return false
	}
	for i := range da {
		if da[i] != db[i] {
			return false
		}
	}
	return true
}

func TestReportCountsAndCPU(t *testing.T) {
	tot := newTotals()
	tl := newTally(tot)
	tl.add(cChatReceived, 5)
	tl.add(cMalformed, 2)
	tl.drain()
	r := tot.report()
	if r.Counters["chat_received"] != 5 || r.Counters["malformed"] != 2 || len(r.Counters) != int(numCounters) {
		t.Errorf("counters = %v", r.Counters)
	}
	if r.ProcessCPUNs <= 0 {
		t.Errorf("process_cpu_ns = %d, want > 0", r.ProcessCPUNs)
	}
	js := r.jsValue()
	if js["format"] != reportFormat {
		t.Errorf("jsValue format = %v", js["format"])
	}
}
