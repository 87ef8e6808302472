// client.go owns one WebSocket connection of a gorilla-style library, after
// gorilla's examples/chat: readPump hands what the peer sends to the
// connection's Member, which applies the protocol's rules; writePump drains
// the member's queue and is the only code that writes messages to the
// socket. Both Go servers run it: each keeps only its upgrade and its
// library's PreparedMessage (Socket.WritePrepared).
package chat

import (
	"encoding/binary"
	"flag"
	"io"
	"net"
	"time"
)

const (
	// WriteWait is the time allowed to write a batch (or a ping) to the peer.
	WriteWait = 10 * time.Second

	// PongWait is the time allowed to read the next frame (data, ping or
	// pong) from the peer.
	PongWait = 60 * time.Second

	// PingPeriod is how often the writer pings the peer.
	PingPeriod = 30 * time.Second

	// CloseGrace is how long a closing connection waits for the peer's
	// answering close frame.
	CloseGrace = 500 * time.Millisecond
)

// pingMessage and pongMessage are RFC 6455's opcodes, as both libraries number them.
const (
	pingMessage = 9
	pongMessage = 10
)

// Socket is what the client needs of a gorilla-style *websocket.Conn: the
// methods gorilla/websocket and fasthttp/websocket (under
// gofiber/contrib/websocket) have in common, and WritePrepared, the one
// write whose type differs between them, which each server adds around its
// library's connection.
type Socket interface {
	NextReader() (messageType int, r io.Reader, err error)
	WriteControl(messageType int, data []byte, deadline time.Time) error
	WriteMessage(messageType int, data []byte) error
	SetReadLimit(limit int64)
	SetReadDeadline(t time.Time) error
	SetWriteDeadline(t time.Time) error
	SetPingHandler(h func(appData string) error)
	SetPongHandler(h func(appData string) error)
	NetConn() net.Conn
	Close() error

	// WritePrepared writes a broadcast that is not a ready Frame: what the
	// server's Hub.Prepare made with the library (its PreparedMessage), or
	// data as a text message when it made nothing.
	WritePrepared(prepared any, data []byte) error
}

// ClientConfig is what a server's flags decide for every connection.
type ClientConfig struct {
	// Pacing is what every connection's Pacer starts from.
	Pacing Pacer
	// NoWriteBatch makes every frame leave with its own write, instead of
	// a writer's batch with one (BatchConn).
	NoWriteBatch bool
	// NoUTF8Check leaves text messages unvalidated, against RFC 6455: for
	// the variant that measures what the check costs.
	NoUTF8Check bool
}

// DefaultClientConfig is every Go server's configuration before its flags.
func DefaultClientConfig() ClientConfig {
	return ClientConfig{Pacing: DefaultPacer()}
}

// RegisterFlags lets -no-write-batch, -no-utf8-check and the pacer's flags
// (-write-coalesce, -write-coalesce-max, -flood-rate) on fs change c.
func (c *ClientConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.NoWriteBatch, "no-write-batch", c.NoWriteBatch, "write each frame with its own syscall (to measure what batching is worth)")
	fs.BoolVar(&c.NoUTF8Check, "no-utf8-check", c.NoUTF8Check, "deliver text messages without checking they are UTF-8, against RFC 6455 (to measure what the check costs)")
	c.Pacing.RegisterFlags(fs)
}

// Client is one connection, between the hub and the socket.
//
// The rule gorilla/websocket and fasthttp/websocket share is one concurrent
// reader and one concurrent writer per connection: readPump is the reader
// and writePump the writer. The only other writes are control frames through
// WriteControl (the pong and close answers that readPump's handlers send),
// which both allow from any goroutine.
type Client struct {
	config *ClientConfig
	conn   Socket

	// raw is the socket writePump writes broadcasts' ready frames to
	// (Frame): the BatchConn under conn when the server batches, held
	// while writePump writes a batch so that the batch leaves in one write,
	// or the library's own net.Conn.
	raw net.Conn

	// pacer spaces a busy connection's batches (see Pacer).
	pacer Pacer

	// member is this connection in the hub: its rooms, its protocol state,
	// its bounded queue (which writePump drains) and the request to close.
	member *Member

	readDone  chan struct{} // closed when readPump returns
	writeDone chan struct{} // closed when writePump returns
}

// NewClient makes the client of an upgraded connection; Run runs it. batch
// is the socket the server accepted through BatchListener (nil if it did
// not), under conn.
func NewClient(hub *Hub, conn Socket, batch *BatchConn, config *ClientConfig) *Client {
	batch.CountWrites(&hub.Stats.BytesWritten)
	var raw net.Conn = batch
	if config.NoWriteBatch || batch == nil {
		raw = conn.NetConn() // never held: each frame leaves with its own write
	}
	return &Client{
		config:    config,
		conn:      conn,
		raw:       raw,
		pacer:     config.Pacing,
		member:    NewMember(hub),
		readDone:  make(chan struct{}),
		writeDone: make(chan struct{}),
	}
}

// Run is the life of a connection: registered with the hub, one writer
// goroutine, the reader on this one, and done when both have ended.
func (c *Client) Run() {
	stats := c.member.hub.Stats
	stats.ConnectionsTotal.Add(1)
	stats.ConnectionsCurrent.Add(1)
	defer stats.ConnectionsCurrent.Add(-1)
	if !c.member.hub.Register(c.member) {
		c.member.Close(CloseGoingAway)
	}
	go c.writePump()
	c.readPump()
	<-c.writeDone
}

// readPump reads frames until the connection fails or closes, then takes the
// client out of the hub (announcing a leave if it was a member).
func (c *Client) readPump() {
	hub := c.member.hub
	defer func() {
		hub.Unregister(c.member)
		c.member.Close(CloseNormal)
		close(c.readDone)
	}()
	c.conn.SetReadLimit(MaxMessageSize)
	extend := func() { c.conn.SetReadDeadline(time.Now().Add(PongWait)) }
	extend()
	c.conn.SetPongHandler(func(string) error { extend(); return nil })
	c.conn.SetPingHandler(func(data string) error {
		extend()
		// Answer as the default ping handler does. A failed write needs no
		// handling here: a broken connection ends through the read error.
		_ = c.conn.WriteControl(pongMessage, []byte(data), time.Now().Add(WriteWait))
		return nil
	})
	// The default close handler (gorilla's, kept by fasthttp/websocket)
	// answers the peer's close frame with one of its own, as
	// docs/protocol.md requires; it is left in place.
	for {
		// ReadMessage applies the size limit to the message as inflated,
		// when permessage-deflate is on (-deflate), and fails a text
		// message that is not UTF-8 with 1007, which the libraries do not
		// check.
		frameType, data, err := ReadMessage(c.conn, MaxMessageSize, !c.config.NoUTF8Check, CloseGrace)
		if err != nil {
			// A close frame, a reset, the read deadline, or an oversize
			// message or invalid UTF-8 (the library or ReadMessage has sent
			// close 1009 or 1007).
			return
		}
		extend()
		hub.Stats.FramesIn.Add(1)
		if frameType != textMessage {
			hub.Stats.Malformed.Add(1)
			continue
		}
		c.member.Handle(data)
	}
}

// writePump writes queued messages and pings until asked to close or a write
// fails. The member wakes it when its queue gets a message after it was
// empty, and it takes the whole queue at once. A connection that stops
// reading blocks it here for up to WriteWait, while its queue fills and the
// hub drops what does not fit.
func (c *Client) writePump() {
	ticker := time.NewTicker(PingPeriod)
	defer func() {
		ticker.Stop()
		c.conn.Close()
		close(c.writeDone)
	}()
	var queued []*Outbound // the batch taken last, handed back to the queue
	for {
		select {
		case <-c.member.Ready():
			// Batch: take everything queued so far, write it under one
			// deadline, and send it to the socket with one write.
			queued = c.member.Take(queued)
			if len(queued) == 0 {
				continue // woken for what an earlier batch already took
			}
			if err := c.writeBatch(queued); err != nil {
				return
			}
			if wait := c.pacer.After(len(queued), time.Now()); wait > 0 {
				time.Sleep(wait)
			}
		case <-ticker.C:
			c.conn.SetWriteDeadline(time.Now().Add(WriteWait))
			if err := c.conn.WriteMessage(pingMessage, nil); err != nil {
				return
			}
		case <-c.member.Closing():
			msg := binary.BigEndian.AppendUint16(nil, uint16(c.member.CloseCode()))
			// Fails with ErrCloseSent when readPump already answered the peer's close.
			_ = c.conn.WriteControl(closeMessage, msg, time.Now().Add(CloseGrace))
			// Give the peer a moment to answer before the socket goes.
			select {
			case <-c.readDone:
			case <-time.After(CloseGrace):
			}
			return
		}
	}
}

// writeBatch writes queued under one deadline and, batching, sends it to
// the socket with one write.
func (c *Client) writeBatch(queued []*Outbound) error {
	// Without batching raw may still be the BatchConn, never held.
	var batch *BatchConn // nil: Hold and Flush do nothing
	if !c.config.NoWriteBatch {
		batch, _ = c.raw.(*BatchConn)
	}
	batch.Hold()
	// The library applies its deadline to the frames it writes; the
	// socket's applies to the ready frames written to raw.
	deadline := time.Now().Add(WriteWait)
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
	if flushErr := batch.Flush(); err == nil {
		err = flushErr
	}
	if err != nil {
		return err
	}
	c.member.hub.Stats.Deliveries.Add(delivered)
	return nil
}

// write sends one message and returns 1 for a delivered chat.
func (c *Client) write(m *Outbound) (int64, error) {
	var err error
	if f, ok := m.Prepared.(Frame); ok {
		// One write of a whole frame: it cannot interleave with the
		// control frames the reader's handlers write through the library.
		_, err = c.raw.Write(f)
	} else {
		err = c.conn.WritePrepared(m.Prepared, m.Data)
	}
	if err != nil {
		return 0, err
	}
	if m.Chat {
		return 1, nil
	}
	return 0, nil
}
