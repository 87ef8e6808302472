// client.go owns what GoFiber and contrib/websocket decide about a
// connection: the upgrade settings, the socket under it, and the
// PreparedMessage write. The connection's reader and writer are the chat
// core's (chat.Client, shared with profile-b/go).
package main

import (
	"sync"

	"wscbench/chat"

	fasthttpws "github.com/fasthttp/websocket"
	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"
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

// socket is contrib's connection as the chat core's client drives it.
type socket struct{ *websocket.Conn }

// WritePrepared writes what preparedMessage made, or data as a text message
// if the library refused to prepare it.
func (s socket) WritePrepared(prepared any, data []byte) error {
	if pm, ok := prepared.(*fasthttpws.PreparedMessage); ok {
		return s.WritePreparedMessage(pm)
	}
	return s.WriteMessage(websocket.TextMessage, data)
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
func serveWs(hub *chat.Hub, config *chat.ClientConfig, conn *websocket.Conn) {
	batch, _ := conn.Locals(batchConnKey).(*chat.BatchConn)
	chat.NewClient(hub, socket{conn}, batch, config).Run()
}

// preparedMessage is the hub's Prepare with -library-frames: a broadcast as
// the library's PreparedMessage, built once, which every recipient's write
// looks up under a mutex they all share (docs/fairness.md), where by
// default the chat core frames it (chat.PrepareFrame). nil, and so a plain
// WriteMessage per recipient, if the library refuses it.
func preparedMessage(data []byte) any {
	pm, err := fasthttpws.NewPreparedMessage(fasthttpws.TextMessage, data)
	if err != nil {
		return nil
	}
	return pm
}
