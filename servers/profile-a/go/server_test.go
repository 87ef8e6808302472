package main

// server_test.go runs this server as a process and talks to it through
// fasthttp/websocket: the tests themselves are wscbench/chat/chattest's,
// shared with profile-b/go.

import (
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"wscbench/chat/chattest"

	ws "github.com/fasthttp/websocket"
)

func TestMain(m *testing.M) { chattest.Main(m, main) }

// client is fasthttp/websocket as chattest uses it.
var client = chattest.Client{
	Dial: func(url string, tlsConfig *tls.Config, deflate bool) (chattest.Conn, string, error) {
		dialer := &ws.Dialer{TLSClientConfig: tlsConfig, EnableCompression: deflate, HandshakeTimeout: 5 * time.Second}
		conn, resp, err := dialer.Dial(url, nil)
		if err != nil {
			return nil, "", err
		}
		return conn, resp.Header.Get("Sec-WebSocket-Extensions"), nil
	},
	CloseCode: func(err error) int {
		var closeErr *ws.CloseError
		if errors.As(err, &closeErr) {
			return closeErr.Code
		}
		return 0
	},
}

func TestTheServerAsAProcessPassesTheSharedTests(t *testing.T) {
	chattest.Run(t, client)
}
