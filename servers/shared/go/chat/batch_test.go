package chat

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// countingConn records every write and write deadline that reach the socket.
type countingConn struct {
	net.Conn
	writes    [][]byte
	deadlines []time.Time
	fail      error
}

func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.deadlines = append(c.deadlines, t)
	return nil
}

func (c *countingConn) Write(p []byte) (int, error) {
	if c.fail != nil {
		return 0, c.fail
	}
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

func TestWritesOutsideABatchPassStraightThrough(t *testing.T) {
	raw := &countingConn{}
	c := &BatchConn{Conn: raw}
	c.Write([]byte("HTTP/1.1 101"))
	c.Write([]byte("frame"))
	if len(raw.writes) != 2 {
		t.Fatalf("want 2 writes, got %d", len(raw.writes))
	}
}

func TestAHeldBatchLeavesInOneWriteInOrder(t *testing.T) {
	raw := &countingConn{}
	c := &BatchConn{Conn: raw}
	c.Hold()
	for _, f := range []string{"one", "two", "three"} {
		if n, err := c.Write([]byte(f)); n != len(f) || err != nil {
			t.Fatalf("held write: %d, %v", n, err)
		}
	}
	if len(raw.writes) != 0 {
		t.Fatalf("held writes reached the socket: %q", raw.writes)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(raw.writes) != 1 || string(raw.writes[0]) != "onetwothree" {
		t.Fatalf("want one write of onetwothree, got %q", raw.writes)
	}
	if c.buf != nil {
		t.Fatal("the flushed batch kept its buffer")
	}
	c.Write([]byte("after"))
	if len(raw.writes) != 2 {
		t.Fatal("a write after Flush was held")
	}
}

func TestABatchNeverGrowsPastItsBound(t *testing.T) {
	raw := &countingConn{}
	c := &BatchConn{Conn: raw}
	frame := bytes.Repeat([]byte("x"), 1000)
	c.Hold()
	for i := 0; i < 50; i++ {
		c.Write(frame)
	}
	c.Flush()
	total := 0
	for _, w := range raw.writes {
		if len(w) > maxBatchBytes {
			t.Fatalf("a write of %d bytes", len(w))
		}
		total += len(w)
	}
	// 16 frames of 1000 bytes fit in 16 KiB: 16 + 16 + 16 + 2.
	if total != 50*1000 || len(raw.writes) != 4 {
		t.Fatalf("want 50000 bytes in 4 writes, got %d in %d", total, len(raw.writes))
	}
	big := bytes.Repeat([]byte("y"), maxBatchBytes+1)
	c.Hold()
	c.Write([]byte("a"))
	c.Write(big)
	c.Flush()
	if n := len(raw.writes); n != 6 || len(raw.writes[5]) != len(big) {
		t.Fatalf("an oversize frame should follow what was held, unbuffered; writes: %d", n)
	}
}

func TestAFailedFlushIsReported(t *testing.T) {
	broken := errors.New("connection reset")
	c := &BatchConn{Conn: &countingConn{fail: broken}}
	c.Hold()
	c.Write([]byte("lost"))
	if err := c.Flush(); !errors.Is(err, broken) {
		t.Fatalf("want the write's error, got %v", err)
	}
}

func TestANilBatchConnBatchesNothing(t *testing.T) {
	var c *BatchConn
	c.Hold()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlinesSetInsideABatchReachTheSocketOnceForTheFlush(t *testing.T) {
	raw := &countingConn{}
	c := &BatchConn{Conn: raw}
	first := time.Unix(100, 0)
	c.SetWriteDeadline(first)
	if len(raw.deadlines) != 1 {
		t.Fatal("a deadline outside a batch should apply at once")
	}
	last := time.Unix(200, 0)
	c.Hold()
	for _, d := range []time.Time{time.Unix(150, 0), last} {
		c.SetWriteDeadline(d)
		c.Write([]byte("frame"))
	}
	if len(raw.deadlines) != 1 {
		t.Fatalf("held deadlines reached the socket: %v", raw.deadlines)
	}
	c.Flush()
	if len(raw.deadlines) != 2 || !raw.deadlines[1].Equal(last) {
		t.Fatalf("want the last held deadline applied once at the flush, got %v", raw.deadlines)
	}
	c.Hold()
	c.Flush()
	if len(raw.deadlines) != 2 {
		t.Fatal("a batch without a deadline set should not touch the socket's deadline")
	}
}

func TestBelowTheFloodRateTheWriterNeverWaits(t *testing.T) {
	p := Pacer{Base: 5 * time.Millisecond, Max: 20 * time.Millisecond, FloodRate: 1000}
	t0 := time.Now()
	// 100 messages a second, in pairs: busy batches, but not a flood.
	for i := range 50 {
		if w := p.After(2, t0.Add(time.Duration(i)*20*time.Millisecond)); w != 0 {
			t.Fatalf("batch %d waited %v", i, w)
		}
	}
}

func TestAFloodedConnectionsWaitDoublesUpToMaxAndASingleMessageResetsIt(t *testing.T) {
	ms := time.Millisecond
	p := Pacer{Base: 5 * ms, Max: 20 * ms, FloodRate: 1000}
	t0 := time.Now()
	// 10 messages every 5 ms is 2,000 a second; the first window measures it.
	now := t0
	for range 21 {
		p.After(10, now)
		now = now.Add(5 * ms)
	}
	var got []time.Duration
	for range 4 {
		got = append(got, p.After(10, now))
		now = now.Add(5 * ms)
	}
	want := []time.Duration{10 * ms, 20 * ms, 20 * ms, 20 * ms}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	if w := p.After(1, now); w != 0 {
		t.Fatalf("a single message 5 ms after the last batch waited %v", w)
	}
	if w := p.After(3, now.Add(5*ms)); w != 5*ms {
		t.Fatalf("the next busy batch waited %v, want 5ms (reset by the single message)", w)
	}
}

func TestABaseOfZeroTurnsPacingOff(t *testing.T) {
	p := Pacer{Max: 20 * time.Millisecond}
	now := time.Now()
	for range 100 {
		if w := p.After(100, now); w != 0 {
			t.Fatalf("waited %v", w)
		}
		now = now.Add(time.Millisecond)
	}
}

func TestCountWritesCountsWhatReachesTheSocketFromThenOn(t *testing.T) {
	raw := &countingConn{}
	c := &BatchConn{Conn: raw}
	c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n"))
	var written atomic.Int64
	c.CountWrites(&written)
	c.Write([]byte("pong")) // a control frame outside a batch
	c.Hold()
	c.Write([]byte("one"))
	c.Write([]byte("two"))
	if got := written.Load(); got != 4 {
		t.Fatalf("held bytes counted before the flush: %d, want 4", got)
	}
	c.Flush()
	if got := written.Load(); got != 10 {
		t.Fatalf("bytes written: %d, want 10 (the upgrade response is not counted)", got)
	}
	var nothing *BatchConn
	nothing.CountWrites(&written) // connections not accepted through BatchListener
}
