// batch.go owns write batching: a net.Conn that, while its writer holds it,
// collects what the WebSocket library writes and sends it with one write
// when the writer flushes. It is how the Go servers let the frames queued for
// one connection leave in one syscall, as tokio-tungstenite (feed, then
// flush) and Zig std (a buffered writer) do by design; docs/fairness.md has
// the policy and the measurement behind it.
//
// gorilla/websocket and fasthttp/websocket both write each frame straight to
// the net.Conn they were given, one write per frame; both take any net.Conn.
// BatchListener wraps every accepted connection, so the library writes to a
// BatchConn without knowing it. Outside Hold and Flush a BatchConn passes
// writes straight through, so HTTP responses and the upgrade are unchanged.
package chat

import (
	"flag"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// maxBatchBytes bounds one batch: a held write that would grow the buffer
// past it sends what is held first. 16 KiB is about 150 typical chat frames
// per write, and keeps the pool small when a broadcast has every writer
// holding a batch at once (1,000 writers hold at most 16 MiB).
const maxBatchBytes = 16 << 10

// batchBuffers holds the buffers of batches in progress, so that an idle
// connection holds no buffer at all.
var batchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, maxBatchBytes); return &b }}

// BatchListener wraps the connections ln accepts in BatchConn.
func BatchListener(ln net.Listener) net.Listener { return batchListener{ln} }

type batchListener struct{ net.Listener }

func (l batchListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &BatchConn{Conn: c}, nil
}

// BatchConn is a net.Conn whose writes can be held and sent together.
//
// The connection's writer calls Hold, writes its queued frames through the
// library, and calls Flush. Writes from other goroutines meanwhile (the
// control frames a reader answers with) join the batch, in order.
//
// Both libraries set the socket's write deadline before every frame they
// write; each call re-arms a runtime timer under a lock (13 % of gorilla's
// CPU in saturation, by pprof: docs/fairness.md). Inside a batch the last
// deadline set is kept and applied once, to the flush.
type BatchConn struct {
	net.Conn
	mu       sync.Mutex
	held     bool
	buf      *[]byte       // from batchBuffers while a batch holds bytes
	deadline time.Time     // the write deadline set while held, for the flush
	pending  bool          // deadline was set while held and not yet applied
	written  *atomic.Int64 // counts what goes to Conn, once CountWrites set it
}

// CountWrites adds every byte written to the socket from now on to n. The
// client calls it once after the upgrade, before its pumps start, so n
// counts WebSocket frames only (Stats.BytesWritten). Nothing on a nil
// *BatchConn.
func (c *BatchConn) CountWrites(n *atomic.Int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.written = n
	c.mu.Unlock()
}

// writeLocked writes p to the socket and counts what it wrote.
func (c *BatchConn) writeLocked(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if c.written != nil {
		c.written.Add(int64(n))
	}
	return n, err
}

// SetWriteDeadline applies the deadline at once outside a batch, and to the
// batch's flush inside one.
func (c *BatchConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held {
		return c.Conn.SetWriteDeadline(t)
	}
	c.deadline, c.pending = t, true
	return nil
}

// Hold starts a batch: writes are kept until Flush. Hold and Flush on a nil
// *BatchConn do nothing, for connections that were not accepted through
// BatchListener.
func (c *BatchConn) Hold() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
}

// Flush ends the batch and sends what it holds with one write.
func (c *BatchConn) Flush() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = false
	return c.sendLocked()
}

// Write sends p, or keeps it while the connection is held.
func (c *BatchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held {
		return c.writeLocked(p)
	}
	if c.buf != nil && len(*c.buf)+len(p) > maxBatchBytes {
		if err := c.sendLocked(); err != nil {
			return 0, err
		}
	}
	if len(p) > maxBatchBytes {
		return c.writeLocked(p)
	}
	if c.buf == nil {
		c.buf = batchBuffers.Get().(*[]byte)
	}
	*c.buf = append(*c.buf, p...)
	return len(p), nil
}

// sendLocked writes the held bytes, under the deadline set while they were
// held, and returns the buffer to the pool.
func (c *BatchConn) sendLocked() error {
	if c.pending {
		c.pending = false
		if err := c.Conn.SetWriteDeadline(c.deadline); err != nil {
			return err
		}
	}
	if c.buf == nil {
		return nil
	}
	b := c.buf
	c.buf = nil
	_, err := c.writeLocked(*b)
	*b = (*b)[:0]
	batchBuffers.Put(b)
	return err
}

// Pacer spaces a flooded connection's batches. While the connection receives
// at least FloodRate messages a second (measured over 100 ms windows), after
// a batch of more than one message, or one sent less than Base after the
// previous, the writer waits before it takes the next, so that what the hub
// queues meanwhile leaves in the same write. The wait starts at Base and
// doubles while batches keep holding several messages, up to Max; a batch of
// one sets it back to Base. Below FloodRate the writer never waits, so
// moderate traffic pays no latency for it. The other servers pace the same
// way (docs/fairness.md, "Pacing").
type Pacer struct {
	Base, Max time.Duration
	FloodRate float64 // messages a second

	pause       time.Duration
	last        time.Time
	windowStart time.Time
	windowCount int
	rate        float64 // messages a second in the last full window
}

// DefaultPacer is every Go server's pacing: 5 ms doubling to 20 ms, on
// connections that get at least 1,000 messages a second.
func DefaultPacer() Pacer {
	return Pacer{Base: 5 * time.Millisecond, Max: 20 * time.Millisecond, FloodRate: 1000}
}

// RegisterFlags lets -write-coalesce, -write-coalesce-max and -flood-rate on
// fs set p's settings.
func (p *Pacer) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&p.Base, "write-coalesce", p.Base, "a flooded connection's writer waits this long between batches; 0 never waits")
	fs.DurationVar(&p.Max, "write-coalesce-max", p.Max, "... doubling up to this while its batches hold several messages")
	fs.Float64Var(&p.FloodRate, "flood-rate", p.FloodRate, "messages a second to one connection from which its writer waits at all")
}

// rateWindow is how long Pacer counts messages before it updates the rate.
const rateWindow = 100 * time.Millisecond

// After reports how long to wait after a batch of n messages sent at now.
func (p *Pacer) After(n int, now time.Time) time.Duration {
	if p.Base <= 0 {
		return 0
	}
	p.measure(n, now)
	busy := n > 1 || now.Sub(p.last) < p.Base
	p.last = now
	if p.rate < p.FloodRate {
		p.pause = p.Base
		return 0
	}
	if p.pause < p.Base {
		p.pause = p.Base
	}
	wait := time.Duration(0)
	if busy {
		wait = p.pause
	}
	if n > 1 {
		p.pause = min(2*p.pause, max(p.Max, p.Base))
	} else {
		p.pause = p.Base
	}
	return wait
}

// measure counts n messages sent at now into the current window.
func (p *Pacer) measure(n int, now time.Time) {
	if p.windowStart.IsZero() {
		p.windowStart = now
	}
	p.windowCount += n
	if elapsed := now.Sub(p.windowStart); elapsed >= rateWindow {
		p.rate = float64(p.windowCount) / elapsed.Seconds()
		p.windowStart, p.windowCount = now, 0
	}
}
