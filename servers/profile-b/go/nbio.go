// nbio.go owns the event-loop variant (-engine nbio, variant `nbio`): the
// same chat core served by github.com/lesismal/nbio's HTTP server and
// WebSocket upgrader, with no goroutine per connection. nbio reads every
// socket from a few pollers and hands each message to OnMessage; a member's
// queue wakes a flush job on the connection's own serial executor, which
// writes everything queued with one write. The profile's named stack,
// net/http + gorilla, stays the default; docs/fairness.md has why this
// variant exists and what it measured.
package main

import (
	"context"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"wscbench/chat"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/nbhttp"
	nbws "github.com/lesismal/nbio/nbhttp/websocket"
)

// nbClient is one connection in the event-loop variant.
//
// A blocking writer (writePump) stops while the kernel's send buffer is
// full, so its queue fills and the hub drops for it. nbio never blocks: it
// keeps what the socket did not take. pending counts the bytes handed to
// nbio and not yet written (nbio reports each write through OnWrittenSize);
// while it is above zero the connection is blocked, no flush takes its
// queue, and the hub drops for it exactly as for a blocked writer.
type nbClient struct {
	hub    *chat.Hub
	ws     *nbws.Conn
	raw    *nbio.Conn
	member *chat.Member

	pending atomic.Int64
	blocked atomic.Bool
	pausing atomic.Bool // between a flooded connection's batches (chat.Pacer)

	// Owned by the flush job, which nbio runs serially per connection.
	queued []*chat.Outbound
	pacer  chat.Pacer
	ping   *time.Timer
}

// nbBuffers hold a flush's frames while it writes them, so that an idle
// connection holds no buffer.
var nbBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// nbClients finds a connection's nbClient from nbio's write callback.
var nbClients sync.Map // *nbio.Conn -> *nbClient

// flush writes everything queued with one write, unless the socket is
// still full from the last one or the pacer has the connection wait.
func (c *nbClient) flush() {
	if c.blocked.Load() || c.pausing.Load() {
		return
	}
	c.queued = c.member.Take(c.queued)
	if len(c.queued) == 0 {
		return
	}
	var delivered int64
	buf := nbBuffers.Get().(*[]byte)
	for _, m := range c.queued {
		f, ok := m.Prepared.(chat.Frame)
		if !ok {
			f = chat.TextFrame(m.Data)
		}
		*buf = append(*buf, f...)
		if m.Chat {
			delivered++
		}
	}
	// One Write, not Writev: nbio reports every byte a Write sends, now or
	// later from its buffer, through OnWrittenSize, and a Writev that sends
	// everything at once not at all. nbio copies what the socket did not take.
	c.pending.Add(int64(len(*buf)))
	_, err := c.raw.Write(*buf)
	*buf = (*buf)[:0]
	nbBuffers.Put(buf)
	if err != nil {
		return // nbio closes the connection; OnClose cleans up
	}
	c.hub.Stats.Deliveries.Add(delivered)
	// Paced as writePump is: a flooded connection waits between batches.
	if wait := c.pacer.After(len(c.queued), time.Now()); wait > 0 {
		c.pausing.Store(true)
		time.AfterFunc(wait, func() {
			c.pausing.Store(false)
			c.raw.Execute(c.flush)
		})
	}
	if c.pending.Load() > 0 {
		c.blocked.Store(true)
		// Dropped if still full after chat.WriteWait, as a blocked writer would be.
		_ = c.raw.SetWriteDeadline(time.Now().Add(chat.WriteWait))
		c.written(0) // the socket may have drained meanwhile
	}
}

// written is nbio's report that n bytes left for the socket.
func (c *nbClient) written(n int) {
	if c.pending.Add(-int64(n)) <= 0 {
		c.pending.Store(0) // the library's own frames (pongs, close) count too
		if c.blocked.CompareAndSwap(true, false) {
			c.raw.Execute(c.flush)
		}
	}
}

// close answers Member.Close: a close frame with the member's code, then
// the socket after chat.CloseGrace if the peer has not closed it by then.
func (c *nbClient) close() {
	c.raw.Execute(func() {
		_ = c.ws.WriteClose(c.member.CloseCode(), "")
		time.AfterFunc(chat.CloseGrace, func() { _ = c.ws.Close() })
	})
}

// pinger sends a ping every chat.PingPeriod, as writePump's ticker does.
func (c *nbClient) pinger() {
	c.raw.Execute(func() {
		_ = c.ws.WriteMessage(nbws.PingMessage, nil)
		c.ping.Reset(chat.PingPeriod)
	})
}

// nbUpgrader is the variant's WebSocket upgrader: the read limit, the read
// deadline extended by every frame, and the handlers that hand each message
// to the connection's member.
func nbUpgrader(hub *chat.Hub) *nbws.Upgrader {
	u := nbws.NewUpgrader()
	u.MessageLengthLimit = chat.MaxMessageSize // larger closes with 1009
	u.KeepaliveTime = chat.PongWait
	u.CheckOrigin = func(*http.Request) bool { return true }
	u.OnMessage(func(ws *nbws.Conn, t nbws.MessageType, data []byte) {
		c, _ := ws.Session().(*nbClient)
		if c == nil {
			return
		}
		hub.Stats.FramesIn.Add(1)
		if t != nbws.TextMessage {
			hub.Stats.Malformed.Add(1)
			return
		}
		c.member.Handle(data)
	})
	u.OnClose(func(ws *nbws.Conn, _ error) {
		c, _ := ws.Session().(*nbClient)
		if c == nil {
			return
		}
		c.ping.Stop()
		nbClients.Delete(c.raw)
		hub.Unregister(c.member)
		c.member.Close(chat.CloseNormal)
		hub.Stats.ConnectionsCurrent.Add(-1)
	})
	return u
}

// serveNbio serves the chat on nbio until stop, then shuts down as main
// does for net/http: clients closed with 1001, waited for, then the engine.
func serveNbio(addr string, hub *chat.Hub, config *chat.ClientConfig, mux *http.ServeMux, stop <-chan struct{}) {
	u := nbUpgrader(hub)
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		ws, err := u.Upgrade(w, r, nil)
		if err != nil {
			log.Printf("upgrade: %v", err) // the upgrader has answered the request
			return
		}
		raw, ok := ws.Conn.(*nbio.Conn)
		if hc, isHTTP := ws.Conn.(*nbhttp.Conn); isHTTP {
			raw, ok = hc.Conn.(*nbio.Conn)
		}
		if !ok {
			log.Printf("upgrade: nbio gave a %T, not its own connection", ws.Conn)
			ws.Close()
			return
		}
		c := &nbClient{hub: hub, ws: ws, raw: raw, member: chat.NewMember(hub), pacer: config.Pacing}
		c.member.SetHooks(func() { raw.Execute(c.flush) }, c.close)
		c.ping = time.AfterFunc(chat.PingPeriod, c.pinger)
		nbClients.Store(raw, c)
		hub.Stats.ConnectionsTotal.Add(1)
		hub.Stats.ConnectionsCurrent.Add(1)
		ws.SetSession(c)
		if !hub.Register(c.member) {
			c.member.Close(chat.CloseGoingAway)
		}
	})
	engine := nbhttp.NewEngine(nbhttp.Config{
		Network: "tcp",
		Addrs:   []string{addr},
		Handler: mux,
	})
	// nbio checks every text message and close reason itself (with close
	// 1002, where RFC 6455 names 1007); -no-utf8-check turns that off too.
	if config.NoUTF8Check {
		engine.CheckUtf8 = func([]byte) bool { return true }
	}
	engine.OnWrittenSize(func(raw *nbio.Conn, _ []byte, n int) {
		if c, ok := nbClients.Load(raw); ok {
			c.(*nbClient).written(n)
		}
	})
	if err := engine.Start(); err != nil {
		log.Fatalf("listen: %v", err)
	}
	log.Printf("listening on %s (nbio)", addr)
	<-stop
	hub.Shutdown(chat.CloseGoingAway)
	for deadline := time.Now().Add(connShutdownWait); hub.Stats.ConnectionsCurrent.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownWait)
	defer cancel()
	_ = engine.Shutdown(ctx)
}

var _ net.Conn = (*nbio.Conn)(nil)
