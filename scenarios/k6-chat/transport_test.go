package chat

// The transports against a tiny chat hub in the test itself (gorilla's
// server side, over TLS and with permessage-deflate when asked), so these
// tests need no server build: wss with the run's certificate, deflate
// offered and recorded, and handshakes that fail counted with their reason
// and promptly.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// miniHub echoes a join to its sender, relays every chat to the others, and
// closes with 1000 on leave, as the chat servers do.
type miniHub struct {
	mu    sync.Mutex
	conns map[*websocket.Conn]*sync.Mutex
}

func (h *miniHub) serve(c *websocket.Conn) {
	h.mu.Lock()
	lock := &sync.Mutex{}
	h.conns[c] = lock
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.conns, c)
		h.mu.Unlock()
	}()
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		switch {
		case strings.Contains(string(msg), `"type":"join"`):
			lock.Lock()
			_ = c.WriteMessage(websocket.TextMessage, append(msg[:len(msg)-1:len(msg)-1], `,"online":1}`...))
			lock.Unlock()
		case strings.Contains(string(msg), `"type":"chat"`):
			h.mu.Lock()
			for other, l := range h.conns {
				if other != c {
					l.Lock()
					_ = other.WriteMessage(websocket.TextMessage, msg)
					l.Unlock()
				}
			}
			h.mu.Unlock()
		default:
			lock.Lock()
			done := closedOnLeave(c, msg)
			lock.Unlock()
			if done {
				return
			}
		}
	}
}

// hubServer starts a mini hub over TLS or not, accepting permessage-deflate
// or not; it returns the /ws URL and the server.
func hubServer(t *testing.T, useTLS, deflate bool) (string, *httptest.Server) {
	t.Helper()
	hub := &miniHub{conns: map[*websocket.Conn]*sync.Mutex{}}
	up := websocket.Upgrader{EnableCompression: deflate}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		hub.serve(c)
	})
	var ts *httptest.Server
	if useTLS {
		ts = httptest.NewTLSServer(handler)
	} else {
		ts = httptest.NewServer(handler)
	}
	t.Cleanup(ts.Close)
	scheme := "ws"
	if useTLS {
		scheme = "wss"
	}
	return scheme + strings.TrimPrefix(strings.TrimPrefix(ts.URL, "https"), "http") + "/ws", ts
}

// caFileOf writes the test server's certificate as PEM, as the engine writes
// the run's.
func caFileOf(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cert.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	if err := os.WriteFile(path, block, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// chatPair runs two clients chatting 20/s for 600 ms and returns the report.
func chatPair(t *testing.T, url string, tr transportOptions) Report {
	t.Helper()
	tl := newTally(newTotals())
	now := time.Now()
	var wg sync.WaitGroup
	for _, user := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClient(context.Background(), clientOptions{
				url: url, user: user, chatsPerSecond: 20, transport: tr,
				stopChatAt: now.Add(600 * time.Millisecond), leaveAt: now.Add(900 * time.Millisecond),
			}, tl)
		}()
	}
	wg.Wait()
	tl.drain()
	return tl.totals.report()
}

func TestWssWithTheRunsCertificateChatsAndRecordsTheTLSVersionAndCipher(t *testing.T) {
	url, ts := hubServer(t, true, false)
	cfg, err := newTLSConfig(caFileOf(t, ts), false)
	if err != nil {
		t.Fatal(err)
	}
	r := chatPair(t, url, transportOptions{tls: cfg})
	wantCounts(t, r.Counters, map[string]int64{"sessions": 2, "sessions_closed": 2, "connect_errors": 0, "abnormal_closes": 0})
	if r.Counters["chat_received"] < 10 {
		t.Errorf("chat_received = %d over wss, want at least 10", r.Counters["chat_received"])
	}
	if len(r.Negotiated) != 1 {
		t.Fatalf("negotiated = %+v, want one kind", r.Negotiated)
	}
	n := r.Negotiated[0]
	if n.TLSVersion != "TLS 1.3" || !strings.HasPrefix(n.TLSCipherSuite, "TLS_") || n.Deflate != "" || n.Sessions != 2 {
		t.Errorf("negotiated = %+v, want TLS 1.3, a TLS_ cipher suite, no deflate, 2 sessions", n)
	}
}

func TestDeflateOverWssIsOfferedAndTheServersAnswerRecorded(t *testing.T) {
	url, ts := hubServer(t, true, true)
	cfg, err := newTLSConfig(caFileOf(t, ts), false)
	if err != nil {
		t.Fatal(err)
	}
	r := chatPair(t, url, transportOptions{tls: cfg, deflate: true})
	wantCounts(t, r.Counters, map[string]int64{"sessions_closed": 2, "connect_errors": 0, "abnormal_closes": 0})
	if r.Counters["chat_received"] < 10 {
		t.Errorf("chat_received = %d with deflate, want at least 10", r.Counters["chat_received"])
	}
	if len(r.Negotiated) != 1 || !strings.HasPrefix(r.Negotiated[0].Deflate, "permessage-deflate") ||
		!strings.Contains(r.Negotiated[0].Deflate, "server_no_context_takeover") {
		t.Errorf("negotiated = %+v, want the server's permessage-deflate answer", r.Negotiated)
	}
}

func TestDeflateOverCleartextWorksWithoutTLS(t *testing.T) {
	url, _ := hubServer(t, false, true)
	r := chatPair(t, url, transportOptions{deflate: true})
	wantCounts(t, r.Counters, map[string]int64{"sessions_closed": 2, "connect_errors": 0})
	if len(r.Negotiated) != 1 || r.Negotiated[0].TLSVersion != "" || r.Negotiated[0].Deflate == "" {
		t.Errorf("negotiated = %+v, want deflate without TLS", r.Negotiated)
	}
}

// failedConnect runs one client that must fail to connect, and checks it
// was counted with reason, promptly.
func failedConnect(t *testing.T, url string, tr transportOptions, reason string) {
	t.Helper()
	tl := newTally(newTotals())
	start := time.Now()
	runClient(context.Background(), clientOptions{url: url, user: "x", stay: 0, hasStay: true, transport: tr}, tl)
	if d := time.Since(start); d > retryPause+2*time.Second {
		t.Errorf("a failed handshake took %v, want about retryPause", d)
	}
	tl.drain()
	r := tl.totals.report()
	wantCounts(t, r.Counters, map[string]int64{"sessions": 1, "connect_errors": 1, "ws_errors": 1, "sessions_closed": 0})
	if r.ConnectErrorReasons[reason] != 1 || len(r.ConnectErrorReasons) != 1 {
		t.Errorf("connect_error_reasons = %v, want {%s: 1}", r.ConnectErrorReasons, reason)
	}
	if len(r.Negotiated) != 0 {
		t.Errorf("negotiated = %+v after a failed connect, want none", r.Negotiated)
	}
}

func TestAnUntrustedCertificateIsAConnectErrorWithItsReason(t *testing.T) {
	url, _ := hubServer(t, true, false)
	failedConnect(t, url, transportOptions{}, reasonTLS)
}

func TestAnotherCertificateThanTheServersIsRefused(t *testing.T) {
	url, _ := hubServer(t, true, false)
	// A self-signed certificate of another server: trusted, but not the one
	// this server presents.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "other.pem")
	_ = os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	cfg, err := newTLSConfig(path, false)
	if err != nil {
		t.Fatal(err)
	}
	failedConnect(t, url, transportOptions{tls: cfg}, reasonTLS)
}

func TestDeflateAskedOfAServerThatRefusesItIsAConnectError(t *testing.T) {
	url, _ := hubServer(t, false, false)
	failedConnect(t, url, transportOptions{deflate: true}, reasonDeflateRefused)
}

func TestInsecureSkipVerifyAcceptsTheSelfSignedCertificate(t *testing.T) {
	url, _ := hubServer(t, true, false)
	cfg, err := newTLSConfig("", true)
	if err != nil {
		t.Fatal(err)
	}
	r := chatPair(t, url, transportOptions{tls: cfg})
	wantCounts(t, r.Counters, map[string]int64{"sessions_closed": 2, "connect_errors": 0})
}

func TestACaFileThatIsMissingOrNotPEMIsRefused(t *testing.T) {
	if _, err := newTLSConfig(filepath.Join(t.TempDir(), "none.pem"), false); err == nil {
		t.Error("a missing caFile was accepted")
	}
	junk := filepath.Join(t.TempDir(), "junk.pem")
	_ = os.WriteFile(junk, []byte("not a certificate"), 0o600)
	if _, err := newTLSConfig(junk, false); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a caFile without PEM: err = %v", err)
	}
	if _, err := newTLSConfig(junk, true); err == nil {
		t.Error("caFile together with insecureSkipVerify was accepted")
	}
}

func TestConnectReasonsAreClassified(t *testing.T) {
	for _, c := range []struct {
		err  error
		resp *http.Response
		want string
	}{
		{fmt.Errorf("dial tcp 127.0.0.1:1: connect: connection refused"), nil, reasonRefused},
		{websocket.ErrBadHandshake, &http.Response{StatusCode: 404}, reasonHandshake},
		{fmt.Errorf("websocket: invalid compression negotiation"), &http.Response{StatusCode: 101}, reasonDeflateParams},
		{fmt.Errorf("remote error: tls: handshake failure"), nil, reasonTLS},
		{&net.OpError{Op: "dial", Err: &os.SyscallError{Syscall: "bind", Err: syscall.EADDRNOTAVAIL}}, nil, reasonPorts},
		{&net.OpError{Op: "dial", Err: &os.SyscallError{Syscall: "socket", Err: syscall.EMFILE}}, nil, reasonFiles},
	} {
		if got := connectReason(c.err, c.resp); got != c.want {
			t.Errorf("connectReason(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}
