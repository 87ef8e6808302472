package chat

import (
	"bytes"
	"errors"
	"fmt"
	"net"
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

func TestAQuietConnectionNeverWaits(t *testing.T) {
	p := Pacer{Base: 5 * time.Millisecond, Max: 20 * time.Millisecond}
	t0 := time.Now()
	if w := p.After(1, t0); w != 0 {
		t.Fatalf("first single message: waited %v", w)
	}
	if w := p.After(1, t0.Add(100*time.Millisecond)); w != 0 {
		t.Fatalf("single message 100 ms later: waited %v", w)
	}
}

func TestFullBatchesDoubleTheWaitUpToMaxAndASingleMessageResetsIt(t *testing.T) {
	ms := time.Millisecond
	p := Pacer{Base: 5 * ms, Max: 20 * ms}
	t0 := time.Now()
	var got []time.Duration
	for i := range 4 {
		got = append(got, p.After(10, t0.Add(time.Duration(i)*50*ms)))
	}
	want := []time.Duration{5 * ms, 10 * ms, 20 * ms, 20 * ms}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	if w := p.After(1, t0.Add(time.Second)); w != 0 {
		t.Fatalf("a quiet single message waited %v", w)
	}
	if w := p.After(3, t0.Add(2*time.Second)); w != 5*ms {
		t.Fatalf("after the reset, a batch waited %v, want 5ms", w)
	}
}

func TestABaseOfZeroTurnsPacingOff(t *testing.T) {
	p := Pacer{Max: 20 * time.Millisecond}
	if w := p.After(100, time.Now()); w != 0 {
		t.Fatalf("waited %v", w)
	}
}
