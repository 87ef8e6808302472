package chat

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Two k6 instances' reports, merged by re-recording their buckets, are the
// histogram of all their samples: same counts, same percentiles.
func TestMergedReportsEqualOneHistogramOfAllSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := newHistogram()
	halves := [2]*totals{newTotals(), newTotals()}
	for i := 0; i < 200_000; i++ {
		// Log-uniform from 1 µs to ~2 min: every bucket size, and some beyond the range.
		v := clampUs(int64(math.Exp(rng.Float64() * 18.6)))
		_ = all.RecordValue(v)
		halves[i%2].record([]int64{v}, 1)
	}
	merged := newHistogram()
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
		if r.Format != reportFormat || r.LatencyUs.HighestTrackableUs != highestTrackableUs {
			t.Fatalf("report header = %+v", r)
		}
		r.LatencyUs.AddTo(merged)
	}
	if merged.TotalCount() != all.TotalCount() {
		t.Fatalf("merged total %d, all %d", merged.TotalCount(), all.TotalCount())
	}
	for _, q := range []float64{0, 1, 10, 50, 90, 95, 99, 99.9, 99.99, 100} {
		if a, b := merged.ValueAtQuantile(q), all.ValueAtQuantile(q); a != b {
			t.Errorf("p%v: merged %d, all %d", q, a, b)
		}
	}
	if !equalBuckets(merged, all) {
		t.Error("merged buckets differ from the buckets of all samples")
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
