// client.go owns one WebSocket connection: readPump hands what the peer sends
// to the connection's chat.Member, which applies the protocol's rules;
// writePump drains the member's queue and is the only code that writes
// messages to the socket.
package main

import (
	"net"
	"sync"
	"time"

	"wscbench/chat"

	fasthttpws "github.com/fasthttp/websocket"
	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"
)

const (
	// Time allowed to write a message to the peer.
	writeWait = 10 * time.Second

	// Time allowed to read the next frame (data, ping or pong) from the peer.
	pongWait = 60 * time.Second

	// Send pings to the peer with this period.
	pingPeriod = 30 * time.Second

	// Time a closing connection waits for the peer's answering close frame.
	closeGrace = 500 * time.Millisecond
)

var wsConfig = websocket.Config{
	// fasthttp/websocket assembles a message from as many reads as it takes,
	// and clients send a few small chats a second: contrib's default 1 KiB
	// reader, which reads the socket itself since fasthttp releases its own
	// (ReduceMemoryUsage in main.go; docs/fairness.md, "Buffers"). Write
	// buffers come from a pool so that idle connections hold none. Every
	// Origin is allowed by default: benchmark clients send none worth
	// checking.
	ReadBufferSize:  1024,
	WriteBufferSize: 4096,
	WriteBufferPool: &sync.Pool{},
}

// Client is one connection, between the hub and the socket.
//
// The rule fasthttp/websocket keeps from gorilla is one concurrent reader and
// one concurrent writer per connection: readPump is the reader and writePump
// the writer. The only other writes are control frames through WriteControl
// (the pong and close answers that readPump's handlers send), which it allows
// from any goroutine.
type Client struct {
	hub  *chat.Hub
	conn *websocket.Conn

	// batch is the socket under conn, held while writePump writes a batch
	// so that the batch leaves in one write (see chat.BatchConn).
	batch *chat.BatchConn

	// raw is the socket writePump writes broadcasts' ready frames to
	// (chat.Frame): batch, or the library's own net.Conn without batching.
	raw net.Conn

	// pacer spaces a busy connection's batches (see chat.Pacer).
	pacer chat.Pacer

	// member is this connection in the hub: its rooms, its protocol state,
	// its bounded queue (which writePump drains) and the request to close.
	member *chat.Member

	readDone  chan struct{} // closed when readPump returns
	writeDone chan struct{} // closed when writePump returns
}

func newClient(hub *chat.Hub, conn *websocket.Conn, batch *chat.BatchConn) *Client {
	return &Client{
		hub:       hub,
		conn:      conn,
		batch:     batch,
		raw:       rawConn(conn, batch),
		pacer:     pacing,
		member:    chat.NewMember(hub),
		readDone:  make(chan struct{}),
		writeDone: make(chan struct{}),
	}
}

// readPump reads frames until the connection fails or closes, then takes the
// client out of the hub (announcing a leave if it was a member).
func (c *Client) readPump() {
	defer func() {
		c.hub.Unregister(c.member)
		c.member.Close(websocket.CloseNormalClosure)
		close(c.readDone)
	}()
	c.conn.SetReadLimit(chat.MaxMessageSize)
	extend := func() { c.conn.SetReadDeadline(time.Now().Add(pongWait)) }
	extend()
	c.conn.SetPongHandler(func(string) error { extend(); return nil })
	c.conn.SetPingHandler(func(data string) error {
		extend()
		// Answer as the default ping handler does. A failed write needs no
		// handling here: a broken connection ends through the read error.
		_ = c.conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(writeWait))
		return nil
	})
	// The default close handler (gorilla's, kept by fasthttp/websocket)
	// answers the peer's close frame with one of its own, as
	// docs/protocol.md requires; it is left in place.
	for {
		// chat.ReadMessage applies the size limit to the message as
		// inflated, when permessage-deflate is on (-deflate), and fails a
		// text message that is not UTF-8 with 1007, which the library
		// does not check.
		frameType, data, err := chat.ReadMessage(c.conn, chat.MaxMessageSize, !noUTF8Check, closeGrace)
		if err != nil {
			// A close frame, a reset, the read deadline, or an oversize
			// message or invalid UTF-8 (fasthttp/websocket or chat.ReadMessage has sent
			// close 1009 or 1007).
			return
		}
		extend()
		c.hub.Stats.FramesIn.Add(1)
		if frameType != websocket.TextMessage {
			c.hub.Stats.Malformed.Add(1)
			continue
		}
		c.member.Handle(data)
	}
}

// writePump writes queued messages and pings until asked to close or a write
// fails. The member wakes it when its queue gets a message after it was
// empty, and it takes the whole queue at once. A connection that stops reading blocks it here for up to writeWait,
// while its queue fills and the hub drops what does not fit.
func (c *Client) writePump() {
	ticker := time.NewTicker(pingPeriod)
	defer func() {
		ticker.Stop()
		c.conn.Close()
		close(c.writeDone)
	}()
	var queued []*chat.Outbound // the batch taken last, handed back to the queue
	for {
		select {
		case <-c.member.Ready():
			// Batch: take everything queued so far, write it under one
			// deadline, and send it to the socket with one write.
			queued = c.member.Take(queued)
			if len(queued) == 0 {
				continue // woken for what an earlier batch already took
			}
			c.batch.Hold()
			// The library applies its deadline to the frames it writes; the
			// socket's applies to the ready frames written to raw.
			deadline := time.Now().Add(writeWait)
			c.conn.SetWriteDeadline(deadline)
			c.raw.SetWriteDeadline(deadline)
			var delivered int64
			var err error
			for _, m := range queued {
				var d int64
				if d, err = c.write(m); err != nil {
					break
				}
				delivered += d
			}
			if flushErr := c.batch.Flush(); err == nil {
				err = flushErr
			}
			if err != nil {
				return
			}
			c.hub.Stats.Deliveries.Add(delivered)
			if wait := c.pacer.After(len(queued), time.Now()); wait > 0 {
				time.Sleep(wait)
			}
		case <-ticker.C:
			c.conn.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		case <-c.member.Closing():
			msg := websocket.FormatCloseMessage(c.member.CloseCode(), "")
			// Fails with ErrCloseSent when readPump already answered the peer's close.
			_ = c.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeGrace))
			// Give the peer a moment to answer before the socket goes.
			select {
			case <-c.readDone:
			case <-time.After(closeGrace):
			}
			return
		}
	}
}

// write sends one message and returns 1 for a delivered chat.
func (c *Client) write(m *chat.Outbound) (int64, error) {
	var err error
	switch p := m.Prepared.(type) {
	case chat.Frame:
		// One write of a whole frame: it cannot interleave with the
		// control frames the reader's handlers write through the library.
		_, err = c.raw.Write(p)
	case *fasthttpws.PreparedMessage:
		err = c.conn.WritePreparedMessage(p)
	default:
		err = c.conn.WriteMessage(websocket.TextMessage, m.Data)
	}
	if err != nil {
		return 0, err
	}
	if m.Chat {
		return 1, nil
	}
	return 0, nil
}

// batchConnKey is the request local under which keepBatchConn leaves the
// socket for serveWs: fasthttp hands the upgraded connection a wrapper of
// its own, so the BatchConn under it is taken before the upgrade.
const batchConnKey = "wscbench.batch"

// keepBatchConn remembers the socket the server accepted (a BatchConn, as
// the server accepts through chat.BatchListener) for serveWs.
func keepBatchConn(c *fiber.Ctx) error {
	c.Locals(batchConnKey, c.Context().Conn())
	return c.Next()
}

// serveWs runs an upgraded connection until both pumps end. It must not
// return earlier: contrib/websocket recycles conn when it does.
func serveWs(hub *chat.Hub, conn *websocket.Conn) {
	batch, _ := conn.Locals(batchConnKey).(*chat.BatchConn)
	batch.CountWrites(&hub.Stats.BytesWritten)
	if noWriteBatch {
		batch = nil // never held: each frame leaves with its own write
	}
	newClient(hub, conn, batch).run()
}

// run is the life of a connection: registered with the hub, one writer
// goroutine, the reader on this one, and done when both have ended.
func (c *Client) run() {
	stats := c.hub.Stats
	stats.ConnectionsTotal.Add(1)
	stats.ConnectionsCurrent.Add(1)
	defer stats.ConnectionsCurrent.Add(-1)
	if !c.hub.Register(c.member) {
		c.member.Close(websocket.CloseGoingAway)
	}
	go c.writePump()
	c.readPump()
	<-c.writeDone
}

// pacing is what every connection's chat.Pacer starts from; main lets
// -write-coalesce, -write-coalesce-max and -flood-rate change it.
var pacing = chat.DefaultPacer()

// noWriteBatch makes every frame leave with its own write; main's
// -no-write-batch sets it.
var noWriteBatch bool

// noUTF8Check leaves text messages unvalidated, against RFC 6455: main's
// -no-utf8-check sets it, for the variant that measures what the check costs.
var noUTF8Check bool

// libraryFrames makes prepare hand broadcasts to the library as a
// PreparedMessage instead of framing them itself; main's -library-frames sets it.
var libraryFrames bool

// prepare is the hub's Prepare: a broadcast's frame, built once and written
// by every recipient's writer as it is. By default the chat core frames it
// (chat.TextFrame) and the writer writes the bytes to the socket; with
// -library-frames it is the library's PreparedMessage, which every write
// looks up under a mutex shared by all recipients (docs/fairness.md). nil,
// and so a plain WriteMessage per recipient, if the library refuses it.
func prepare(data []byte) any {
	if !libraryFrames {
		return chat.TextFrame(data)
	}
	pm, err := fasthttpws.NewPreparedMessage(fasthttpws.TextMessage, data)
	if err != nil {
		return nil
	}
	return pm
}

// rawConn is the socket ready frames go to: batch when the server batches,
// else the library's own.
func rawConn(conn *websocket.Conn, batch *chat.BatchConn) net.Conn {
	if batch != nil {
		return batch
	}
	return conn.NetConn()
}
