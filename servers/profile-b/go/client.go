// client.go owns what gorilla decides about a connection: the upgrade, and
// the PreparedMessage write. The connection's reader and writer are the chat
// core's (chat.Client, shared with profile-a/go).
package main

import (
	"log"
	"net/http"
	"sync"

	"wscbench/chat"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{
	// gorilla assembles a message from as many reads as it takes, and clients
	// send a few small chats a second: a 1 KiB reader of its own instead of
	// the HTTP server's 4 KiB one, which it would otherwise keep for the
	// connection's life (3 KiB per idle client; docs/fairness.md, "Buffers").
	ReadBufferSize: 1024,
	// Write buffers come from a pool so that idle connections hold none.
	WriteBufferPool: &sync.Pool{},
	// Benchmark clients send no browser Origin worth checking.
	CheckOrigin: func(*http.Request) bool { return true },
}

// socket is gorilla's connection as the chat core's client drives it.
type socket struct{ *websocket.Conn }

// WritePrepared writes what preparedMessage made, or data as a text message
// if gorilla refused to prepare it.
func (s socket) WritePrepared(prepared any, data []byte) error {
	if pm, ok := prepared.(*websocket.PreparedMessage); ok {
		return s.WritePreparedMessage(pm)
	}
	return s.WriteMessage(websocket.TextMessage, data)
}

// serveWs upgrades the request and runs the connection on a goroutine of its
// own, as gorilla's example does: net/http holds the request's buffers for as
// long as the handler runs, so returning frees them.
func serveWs(hub *chat.Hub, config *chat.ClientConfig, w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		log.Printf("upgrade: %v", err) // the upgrader has answered the request
		return
	}
	// The server accepts through chat.BatchListener, so the socket under
	// the upgraded connection is a BatchConn.
	batch, _ := conn.NetConn().(*chat.BatchConn)
	go chat.NewClient(hub, socket{conn}, batch, config).Run()
}

// preparedMessage is the hub's Prepare with -library-frames: a broadcast as
// gorilla's PreparedMessage, built once, which every recipient's write looks
// up under a mutex they all share (docs/fairness.md), where by default the
// chat core frames it (chat.PrepareFrame). nil, and so a plain WriteMessage
// per recipient, if gorilla refuses it.
func preparedMessage(data []byte) any {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, data)
	if err != nil {
		return nil
	}
	return pm
}
