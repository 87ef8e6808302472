// main.go owns the process: flags, routes, and the shutdown docs/protocol.md
// asks for (stop accepting, close clients with 1001, print the final stats as
// the last line of stdout, exit 0 within 2 s).
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"wscbench/chat"

	"github.com/gorilla/websocket"
)

// serverTag is the image tag, reported as "server" in /stats.
const serverTag = "wsc-go"

const (
	// How long shutdown waits for in-flight HTTP requests, then for the
	// WebSocket connections to close; both fit well inside the 2 s budget.
	httpShutdownWait = 300 * time.Millisecond
	connShutdownWait = 1200 * time.Millisecond
)

func main() {
	host := flag.String("host", "0.0.0.0", "address to bind")
	port := flag.Int("port", 8080, "port to bind")
	duration := flag.Float64("duration", 0, "stop after this many seconds as on SIGTERM; 0 runs until signalled")
	flag.BoolVar(&noWriteBatch, "no-write-batch", false, "write each frame with its own syscall (to measure what batching is worth)")
	tlsCert := flag.String("tls-cert", "", "PEM certificate file; with -tls-key the server serves wss (TLS) only")
	tlsKey := flag.String("tls-key", "", "PEM private key file of -tls-cert")
	flag.BoolVar(&upgrader.EnableCompression, "deflate", false, "accept permessage-deflate when a client offers it")
	pacing.RegisterFlags(flag.CommandLine)
	flag.Parse()
	log.SetPrefix(serverTag + " ")

	stats := chat.NewStats(serverTag)
	hub := chat.NewHub(stats)
	hub.Prepare = prepare
	hub.EchoChatToSender = echoChatToSender // false but in the fault_echo test build

	mux := http.NewServeMux() // unmatched paths answer 404
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		serveWs(hub, w, r)
	})
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(stats.JSON())
	})

	// Bind before announcing, so /health answers as soon as the log says so.
	// With a certificate, TLS only: /health and /stats answer over https.
	ln, err := chat.Listen(net.JoinHostPort(*host, strconv.Itoa(*port)), *tlsCert, *tlsKey)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	srv := &http.Server{Handler: mux}
	served := make(chan error, 1)
	// Accepted through BatchListener, a connection's writer can send what
	// is queued for it with one write (see chat.BatchConn), and the bytes
	// it writes are counted.
	go func() { served <- srv.Serve(chat.BatchListener(ln)) }()
	log.Printf("listening on %s", ln.Addr())

	// PID 1 in a scratch container gets no default signal handling.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	var timeUp <-chan time.Time
	if *duration > 0 {
		timeUp = time.After(time.Duration(*duration * float64(time.Second)))
	}
	select {
	case s := <-signals:
		log.Printf("%v: shutting down", s)
	case <-timeUp:
		log.Printf("duration over: shutting down")
	case err := <-served:
		log.Fatalf("serve: %v", err)
	}

	// Stop accepting first; hijacked WebSocket connections are not waited for.
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownWait)
	srv.Shutdown(ctx)
	cancel()
	hub.Shutdown(websocket.CloseGoingAway)
	for deadline := time.Now().Add(connShutdownWait); stats.ConnectionsCurrent.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	os.Stdout.Write(append(stats.JSON(), '\n'))
}
