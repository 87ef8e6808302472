package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// A client that negotiated permessage-deflate reads the chat decompressed
// from the frames encoded once; one that did not reads it in clear.
func TestCompressedFramesReadBackAsTheChatForClientsThatNegotiatedDeflate(t *testing.T) {
	payload := []byte(`{"type":"chat","room":"public","user":"blaster","text":"hello from k6","ts":1.000}`)
	upgrader.EnableCompression = true
	defer func() { upgrader.EnableCompression = false }()
	compressed := newFrames(encodeFrame(0xc1, compress(payload)))
	b := &blaster{rate: 0, frames: newFrames(encodeFrame(0x81, payload)), deflate: &compressed}
	ts := httptest.NewServer(httpHandler(b))
	defer ts.Close()
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
	for _, deflate := range []bool{true, false} {
		d := websocket.Dialer{EnableCompression: deflate}
		c, resp, err := d.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		negotiated := strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate")
		if negotiated != deflate {
			t.Errorf("deflate offered %v, negotiated %v", deflate, negotiated)
		}
		for i := 0; i < 3; i++ {
			_, msg, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("deflate %v: frame %d: %v", deflate, i, err)
			}
			if string(msg) != string(payload) {
				t.Fatalf("deflate %v: got %q", deflate, msg)
			}
		}
		_ = c.Close()
	}
	if len(compressed.frame) >= len(b.frames.frame) {
		t.Errorf("the compressed frame (%d bytes) is not smaller than the plain one (%d)", len(compressed.frame), len(b.frames.frame))
	}
}
