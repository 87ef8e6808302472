// main.go owns the process: flags, routes, and the shutdown docs/protocol.md
// asks for (stop accepting, close clients with 1001, print the final stats as
// the last line of stdout, exit 0 within 2 s).
package main

import (
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"wscbench/chat"

	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"
)

// serverTag is the image tag, reported as "server" in /stats.
const serverTag = "wsca-go"

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
	tlsCert := flag.String("tls-cert", "", "PEM certificate file; with -tls-key the server serves wss (TLS) only")
	tlsKey := flag.String("tls-key", "", "PEM private key file of -tls-cert")
	flag.BoolVar(&wsConfig.EnableCompression, "deflate", false, "accept permessage-deflate when a client offers it")
	clientConfig := chat.DefaultClientConfig()
	clientConfig.RegisterFlags(flag.CommandLine)
	flag.Parse()
	log.SetPrefix(serverTag + " ")
	// PID 1 in a scratch container gets no default signal handling; caught
	// from before the server binds, so a SIGTERM right after /health first
	// answers still ends in the final stats line.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	if wsConfig.EnableCompression {
		// A ready frame (chat.Frame) is uncompressed: with permessage-deflate
		// every broadcast goes through the library, which compresses it.
		*libraryFrames = true
	}

	stats := chat.NewStats(serverTag)
	hub := chat.NewHub(stats)
	hub.Prepare = chat.PrepareFrame
	if *libraryFrames {
		hub.Prepare = preparedMessage
	}

	app := fiber.New(fiber.Config{
		DisableStartupMessage: true,
		// fasthttp hands a hijacked connection its 4 KiB request reader and
		// keeps it for the connection's life; with ReduceMemoryUsage it
		// returns the reader to its pool once a request is read and nothing
		// is buffered behind it (a WebSocket client waits for the 101), so
		// the upgraded connection reads the socket through contrib's 1 KiB
		// reader alone, as gorilla's does (docs/fairness.md, "Buffers").
		// It also releases the reader and writer of idle keep-alive HTTP
		// connections (/health, /stats) between requests. No WebSocket frame
		// goes through fasthttp's buffers either way.
		ReduceMemoryUsage: true,
	}) // unmatched paths answer 404
	// By default fasthttp makes Close a no-op on a hijacked connection until
	// the handler returns. writePump must be able to end a connection whose
	// reader is blocked (a dead slow consumer), so the connection is ours to
	// close; writePump always does.
	app.Server().KeepHijackedConns = true
	app.Get("/ws", keepBatchConn, websocket.New(func(conn *websocket.Conn) {
		serveWs(hub, &clientConfig, conn)
	}, wsConfig))
	app.Get("/health", func(c *fiber.Ctx) error {
		return c.SendString("ok")
	})
	app.Get("/stats", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(stats.JSON())
	})

	// Bind before announcing, so /health answers as soon as the log says so.
	// With a certificate, TLS only: /health and /stats answer over https.
	ln, err := chat.Listen(net.JoinHostPort(*host, strconv.Itoa(*port)), *tlsCert, *tlsKey)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	served := make(chan error, 1)
	// Accepted through BatchListener, a connection's writer can send what
	// is queued for it with one write (see chat.BatchConn), and the bytes
	// it writes are counted.
	go func() { served <- app.Listener(chat.BatchListener(ln)) }()
	log.Printf("listening on %s", ln.Addr())

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
	app.ShutdownWithTimeout(httpShutdownWait)
	hub.Shutdown(chat.CloseGoingAway)
	for deadline := time.Now().Add(connShutdownWait); stats.ConnectionsCurrent.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	os.Stdout.Write(append(stats.JSON(), '\n'))
}
