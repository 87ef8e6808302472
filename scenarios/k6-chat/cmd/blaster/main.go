// Command blaster is a static WebSocket server that sends one chat frame to
// every connected client, over and over, as fast as it can or at a total
// rate split evenly over the clients. It measures the load generator, not a
// chat server: scenarios/loadgen-capacity.js connects to it and only counts.
//
//	blaster --host 127.0.0.1 --port 18090 --rate 0 [--tls-cert F --tls-key F] [--deflate]
//
// With --tls-cert and --tls-key it serves wss only (/health over https), so
// that loadgen-capacity measures what k6 receives over TLS. With --deflate it
// accepts permessage-deflate (no context takeover, as gorilla negotiates it)
// and sends the chat compressed once, RSV1 set, to the clients that
// negotiated it: each frame is a whole message compressed on its own, which
// is exactly what no context takeover means.
//
// Every connection gets the same chat (a fixed ts, stamped at start). The
// frame is encoded once, and sent in batches of many frames per write, since
// one write per frame (gorilla's WriteMessage, even with a PreparedMessage)
// costs the blaster a syscall per frame and would make it, not the client
// under test, the limit. What clients send is read and dropped, except a
// close, which is answered. GET /health answers 200. SIGTERM or SIGINT stop
// it (it runs as PID 1 in a container); the last line on stderr says how many
// frames it sent.
package main

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

const (
	// framesPerWrite: frames in one write when sending as fast as possible.
	framesPerWrite = 64
	// tick: how often a rate-limited connection writes what it owes.
	tick = 5 * time.Millisecond
	// writeWait bounds a write to a client that stopped reading.
	writeWait = 10 * time.Second
)

var upgrader = websocket.Upgrader{
	ReadBufferSize:  4 << 10,
	WriteBufferSize: 4 << 10,
	CheckOrigin:     func(*http.Request) bool { return true },
}

type blaster struct {
	rate    float64      // frames/s over all clients; 0 = as fast as possible
	frames  frames       // what a client that did not negotiate deflate gets
	deflate *frames      // what one that did gets (nil: deflate not offered)
	clients atomic.Int64 // connected now
	sent    atomic.Int64 // frames written
}

// frames is one encoded server-to-client frame and framesPerWrite of them.
type frames struct {
	frame []byte
	batch []byte
}

func newFrames(frame []byte) frames {
	return frames{frame: frame, batch: bytes.Repeat(frame, framesPerWrite)}
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to bind")
	port := flag.Int("port", 18090, "port to bind")
	rate := flag.Float64("rate", 0, "chat frames per second over all clients, split evenly; 0 = as fast as possible")
	tlsCert := flag.String("tls-cert", "", "PEM certificate: serve wss only (with --tls-key)")
	tlsKey := flag.String("tls-key", "", "PEM private key of --tls-cert")
	deflate := flag.Bool("deflate", false, "accept permessage-deflate (no context takeover)")
	flag.Parse()
	if *rate < 0 {
		log.Fatalf("--rate must be >= 0, got %v", *rate)
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		log.Fatal("--tls-cert and --tls-key go together")
	}

	ts := time.Now().UnixMilli()
	payload := []byte(`{"type":"chat","room":"public","user":"blaster","text":"hello from k6","ts":` +
		strconv.FormatInt(ts, 10) + `.000}`)
	b := &blaster{rate: *rate, frames: newFrames(encodeFrame(0x81, payload))}
	if *deflate {
		upgrader.EnableCompression = true
		compressed := newFrames(encodeFrame(0xc1, compress(payload)))
		b.deflate = &compressed
	}

	addr := net.JoinHostPort(*host, strconv.Itoa(*port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	if *tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			log.Fatalf("--tls-cert/--tls-key: %v", err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	srv := &http.Server{Handler: httpHandler(b), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close() // hijacked connections end with the process
	}()
	log.Printf("blaster on %s, rate %v frames/s (0 = unbounded), %d-byte frames, tls %v, deflate %v",
		addr, *rate, len(b.frames.frame), *tlsCert != "", *deflate)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "blaster: %d frames sent\n", b.sent.Load())
}

// httpHandler serves /health and /ws.
func httpHandler(b *blaster) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/ws", b.serveWS)
	return mux
}

// encodeFrame is payload as one unmasked final text frame; first is the
// first byte (0x81: FIN, text; 0xc1: FIN, RSV1 for a compressed message).
func encodeFrame(first byte, payload []byte) []byte {
	n := len(payload)
	var h []byte
	switch {
	case n < 126:
		h = []byte{first, byte(n)}
	case n <= 0xffff:
		h = []byte{first, 126, byte(n >> 8), byte(n)}
	default:
		panic("frame too long")
	}
	return append(h, payload...)
}

// compress is payload as one permessage-deflate message (RFC 7692 7.2.1): a
// raw DEFLATE stream flushed, without its final empty stored block's
// 0x00 0x00 0xff 0xff.
func compress(payload []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	_, _ = w.Write(payload)
	_ = w.Flush()
	return bytes.TrimSuffix(buf.Bytes(), []byte{0x00, 0x00, 0xff, 0xff})
}

// offersDeflate is gorilla's own test of a request before it negotiates
// compression: an offer of permessage-deflate.
func offersDeflate(r *http.Request) bool {
	for _, v := range r.Header.Values("Sec-WebSocket-Extensions") {
		for _, ext := range strings.Split(v, ",") {
			if strings.TrimSpace(strings.SplitN(ext, ";", 2)[0]) == "permessage-deflate" {
				return true
			}
		}
	}
	return false
}

func (b *blaster) serveWS(w http.ResponseWriter, r *http.Request) {
	f := &b.frames
	if b.deflate != nil && offersDeflate(r) {
		f = b.deflate
	}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	b.clients.Add(1)
	defer b.clients.Add(-1)
	defer conn.Close()

	// The writer writes whole frames straight to the socket; before the
	// close reply goes out through gorilla, it must have stopped, so the
	// reply never lands inside a frame.
	stopWriter := make(chan struct{})
	writerDone := make(chan struct{})
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() { close(stopWriter) })
		<-writerDone
	}
	go func() {
		defer close(writerDone)
		b.write(conn.UnderlyingConn(), f, stopWriter)
	}()
	conn.SetCloseHandler(func(code int, _ string) error {
		stop()
		msg := websocket.FormatCloseMessage(code, "")
		if code == websocket.CloseNoStatusReceived {
			msg = websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
		}
		_ = conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		return nil
	})
	for {
		if _, _, err := conn.NextReader(); err != nil {
			break
		}
	}
	stopOnce.Do(func() { close(stopWriter) })
	_ = conn.UnderlyingConn().SetWriteDeadline(time.Now()) // unblock a writer stuck on a dead client
	<-writerDone
}

// write sends frames to c until stop closes or a write fails.
func (b *blaster) write(c net.Conn, f *frames, stop <-chan struct{}) {
	if b.rate == 0 {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = c.SetWriteDeadline(time.Now().Add(writeWait))
			if _, err := c.Write(f.batch); err != nil {
				return
			}
			b.sent.Add(framesPerWrite)
			// A write that does not block is no scheduling point: without
			// this, writers that never park starve the readers (which answer
			// closes) for seconds.
			runtime.Gosched()
		}
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	last := time.Now()
	owed := 0.0
	for {
		select {
		case <-stop:
			return
		case now := <-ticker.C:
			perClient := b.rate / float64(max(b.clients.Load(), 1))
			owed += perClient * now.Sub(last).Seconds()
			last = now
			for owed >= 1 {
				n := min(int(owed), framesPerWrite)
				_ = c.SetWriteDeadline(time.Now().Add(writeWait))
				if _, err := c.Write(f.batch[:n*len(f.frame)]); err != nil {
					return
				}
				b.sent.Add(int64(n))
				owed -= float64(n)
			}
		}
	}
}
