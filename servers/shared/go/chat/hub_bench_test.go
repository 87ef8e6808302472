package chat

import (
	"strconv"
	"testing"
)

// BenchmarkChatTo500Members is chats fanned out to 499 members and taken off
// their queues as their writers would, every chat (batch=1, a writer that
// keeps up unpaced) or every 16 (batch=16, a paced writer in saturation): the
// hub's share of a saturation run's CPU, without the sockets.
// docs/fairness.md compares the hub's versions with it:
//
//	go test -run '^$' -bench ChatTo500 -benchtime 20000x wscbench/chat
func BenchmarkChatTo500Members(b *testing.B) {
	for _, batch := range []int{1, 16} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) { benchChatTo500(b, batch) })
	}
}

func benchChatTo500(b *testing.B, batch int) {
	h := NewHub(NewStats("bench"))
	ms := make([]*Member, 500)
	for i := range ms {
		ms[i] = testMember(h, "u"+strconv.Itoa(i))
		h.join(ms[i], "public", ms[i].user)
	}
	for _, m := range ms {
		drainForBench(m)
	}
	ts := []byte("12.5")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		from := ms[i%len(ms)]
		h.chat(from, h.roomOf(from, "public"), "hello, room", ts)
		if (i+1)%batch == 0 {
			for _, m := range ms {
				drainForBench(m)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ms)-1), "ns/delivery")
}

// drainForBench empties m's queue as its writer would.
func drainForBench(m *Member) {
	select {
	case <-m.Ready():
	default:
	}
	benchSpare = m.Take(benchSpare)
}

var benchSpare []*Outbound
