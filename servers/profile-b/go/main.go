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
	libraryFrames := flag.Bool("library-frames", false, "write broadcasts through the library's PreparedMessage instead of as ready frames (to measure what framing them once is worth)")
	engine := flag.String("engine", "net/http", "net/http (gorilla, the profile's stack) or nbio (the event-loop variant, nbio.go)")
	tlsCert := flag.String("tls-cert", "", "PEM certificate file; with -tls-key the server serves wss (TLS) only")
	tlsKey := flag.String("tls-key", "", "PEM private key file of -tls-cert")
	flag.BoolVar(&upgrader.EnableCompression, "deflate", false, "accept permessage-deflate when a client offers it")
	clientConfig := chat.DefaultClientConfig()
	clientConfig.RegisterFlags(flag.CommandLine)
	flag.Parse()
	log.SetPrefix(serverTag + " ")
	// PID 1 in a scratch container gets no default signal handling; caught
	// from before the server binds, so a SIGTERM right after /health first
	// answers still ends in the final stats line.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)

	stats := chat.NewStats(serverTag)
	hub := chat.NewHub(stats)
	hub.Prepare = chat.PrepareFrame
	hub.EchoChatToSender = echoChatToSender // false but in the fault_echo test build

	mux := http.NewServeMux() // unmatched paths answer 404
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(stats.JSON())
	})
	addr := net.JoinHostPort(*host, strconv.Itoa(*port))

	if *engine == "nbio" && (*tlsCert != "" || upgrader.EnableCompression) {
		log.Fatalf("-engine nbio serves ws only: no -tls-cert, -tls-key or -deflate")
	}
	if upgrader.EnableCompression {
		// A ready frame (chat.Frame) is uncompressed: with permessage-deflate
		// every broadcast goes through the library, which compresses it.
		*libraryFrames = true
	}
	if *libraryFrames {
		hub.Prepare = preparedMessage
	}
	if *engine == "nbio" {
		stop, done := make(chan struct{}), make(chan struct{})
		go func() { serveNbio(addr, hub, &clientConfig, mux, stop); close(done) }()
		waitForStop(signals, *duration, nil)
		close(stop)
		<-done
		os.Stdout.Write(append(stats.JSON(), '\n'))
		return
	}
	if *engine != "net/http" {
		log.Fatalf("-engine %q: want net/http or nbio", *engine)
	}
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		serveWs(hub, &clientConfig, w, r)
	})

	// Bind before announcing, so /health answers as soon as the log says so.
	// With a certificate, TLS only: /health and /stats answer over https.
	ln, err := chat.Listen(addr, *tlsCert, *tlsKey)
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
	waitForStop(signals, *duration, served)

	// Stop accepting first; hijacked WebSocket connections are not waited for.
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownWait)
	srv.Shutdown(ctx)
	cancel()
	hub.Shutdown(chat.CloseGoingAway)
	for deadline := time.Now().Add(connShutdownWait); stats.ConnectionsCurrent.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	os.Stdout.Write(append(stats.JSON(), '\n'))
}

// waitForStop returns on SIGTERM or SIGINT, or once duration seconds have
// passed if it is above 0; a server that stops serving ends the process.
func waitForStop(signals <-chan os.Signal, duration float64, served <-chan error) {
	var timeUp <-chan time.Time
	if duration > 0 {
		timeUp = time.After(time.Duration(duration * float64(time.Second)))
	}
	select {
	case s := <-signals:
		log.Printf("%v: shutting down", s)
	case <-timeUp:
		log.Printf("duration over: shutting down")
	case err := <-served:
		log.Fatalf("serve: %v", err)
	}
}
