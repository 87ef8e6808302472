package chat

import (
	"strconv"
	"testing"
)

// BenchmarkChatTo500Members is one chat fanned out to 499 members and taken
// off each of their queues, as their writers would: the hub's share of a
// saturation run's CPU, without the sockets. docs/fairness.md compares the
// hub's versions with it:
//
//	go test -run '^$' -bench ChatTo500 -count 6 wscbench/chat
func BenchmarkChatTo500Members(b *testing.B) {
	h := NewHub(NewStats("bench"))
	ms := make([]*Member, 500)
	for i := range ms {
		ms[i] = testMember(h, "u"+strconv.Itoa(i))
		ms[i].state = stateJoined
		h.join(ms[i])
	}
	for _, m := range ms {
		drainForBench(m)
	}
	ts := []byte("12.5")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.chat(ms[i%len(ms)], "hello, room", ts)
		for _, m := range ms {
			drainForBench(m)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ms)-1), "ns/delivery")
}

// drainForBench empties m's queue as its writer would.
func drainForBench(m *Member) {
	for len(m.send) > 0 {
		<-m.send
	}
}
