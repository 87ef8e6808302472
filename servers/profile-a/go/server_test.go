package main

// server_test.go runs this server as a process (the test binary re-executed
// with WSC_TEST_SERVE=1 runs main) and talks to it as a client would: over
// wss with a certificate the test makes, and with permessage-deflate.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	ws "github.com/fasthttp/websocket"
)

func TestMain(m *testing.M) {
	if os.Getenv("WSC_TEST_SERVE") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testCert writes a self-signed P-256 certificate for 127.0.0.1, valid from
// an hour ago for validFor, and its key; it returns both paths and a client
// configuration that trusts the certificate.
func testCert(t *testing.T, dir string, validFor time.Duration) (certFile, keyFile string, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(-time.Hour + validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = filepath.Join(dir, fmt.Sprintf("cert-%d.pem", template.SerialNumber))
	keyFile = filepath.Join(dir, fmt.Sprintf("key-%d.pem", template.SerialNumber))
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	os.WriteFile(certFile, certPEM, 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return certFile, keyFile, &tls.Config{RootCAs: pool}
}

// server is this server running as a child process.
type server struct {
	cmd    *exec.Cmd
	addr   string
	stdout strings.Builder
	stderr strings.Builder
}

// startServer runs the server with args on a free port of 127.0.0.1.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &server{addr: fmt.Sprintf("127.0.0.1:%d", port)}
	s.cmd = exec.Command(os.Args[0], append([]string{"-host", "127.0.0.1", "-port", fmt.Sprint(port)}, args...)...)
	s.cmd.Env = append(os.Environ(), "WSC_TEST_SERVE=1")
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	return s
}

// waitHealthy polls /health with client until it answers ok.
func (s *server) waitHealthy(t *testing.T, scheme string, client *http.Client) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := client.Get(scheme + "://" + s.addr + "/health"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) == "ok" {
				return
			}
		}
	}
	t.Fatalf("no /health over %s within 10 s; stderr: %s", scheme, s.stderr.String())
}

// stop sends SIGTERM and returns the final stats line.
func (s *server) stop(t *testing.T) map[string]any {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v; stderr: %s", err, s.stderr.String())
	}
	var stats map[string]any
	lines := strings.Split(strings.TrimSpace(s.stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &stats); err != nil {
		t.Fatalf("final stats line %q: %v", lines[len(lines)-1], err)
	}
	return stats
}

// chatOnce joins alice and bob through dialer at url, has alice chat, and
// checks that bob receives it; it returns the extensions the server accepted.
func chatOnce(t *testing.T, dialer *ws.Dialer, url string) string {
	t.Helper()
	dial := func(user string) (*ws.Conn, string) {
		conn, resp, err := dialer.Dial(url, nil)
		if err != nil {
			t.Fatalf("dial %s: %v", url, err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		conn.WriteJSON(map[string]string{"type": "join", "room": "public", "user": user})
		expect(t, conn, "join", user)
		return conn, resp.Header.Get("Sec-WebSocket-Extensions")
	}
	alice, extensions := dial("alice")
	bob, _ := dial("bob")
	expect(t, alice, "join", "bob")
	text := strings.Repeat("hello over the wire ", 20)
	alice.WriteJSON(map[string]any{"type": "chat", "room": "public", "text": text, "ts": 12.5})
	got := expect(t, bob, "chat", "alice")
	if got["text"] != text || got["ts"] != 12.5 {
		t.Fatalf("bob received %v", got)
	}
	alice.WriteJSON(map[string]string{"type": "leave"})
	expect(t, bob, "leave", "alice")
	return extensions
}

// expect reads conn's next message and checks its type and user.
func expect(t *testing.T, conn *ws.Conn, kind, user string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := conn.ReadJSON(&m); err != nil {
		t.Fatalf("waiting for %s of %s: %v", kind, user, err)
	}
	if m["type"] != kind || m["user"] != user {
		t.Fatalf("want %s of %s, got %v", kind, user, m)
	}
	return m
}

func TestServesWssWithItsCertificateAndNegotiatesDeflate(t *testing.T) {
	cert, key, clientTLS := testCert(t, t.TempDir(), 24*time.Hour)
	s := startServer(t, "-tls-cert", cert, "-tls-key", key, "-deflate")
	https := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}, Timeout: time.Second}
	s.waitHealthy(t, "https", https)
	dialer := &ws.Dialer{TLSClientConfig: clientTLS, EnableCompression: true, HandshakeTimeout: 5 * time.Second}
	if ext := chatOnce(t, dialer, "wss://"+s.addr+"/ws"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("the server did not accept permessage-deflate: %q", ext)
	}
	if _, err := (&http.Client{Timeout: time.Second}).Get("http://" + s.addr + "/health"); err == nil {
		t.Fatal("the TLS server answered plain http too")
	}
	stats := s.stop(t)
	if stats["deliveries"].(float64) < 1 || stats["bytes_written"].(float64) < 1 {
		t.Fatalf("final stats count no delivery or no bytes: %v", stats)
	}
}

func TestWithoutDeflateRefusesTheExtensionAndStillChats(t *testing.T) {
	s := startServer(t)
	s.waitHealthy(t, "http", &http.Client{Timeout: time.Second})
	dialer := &ws.Dialer{EnableCompression: true, HandshakeTimeout: 5 * time.Second}
	if ext := chatOnce(t, dialer, "ws://"+s.addr+"/ws"); ext != "" {
		t.Fatalf("extensions accepted without -deflate: %q", ext)
	}
	s.stop(t)
}

func TestCompressionMakesFewerBytesForTheSameChats(t *testing.T) {
	written := map[bool]float64{}
	for _, deflate := range []bool{false, true} {
		args := []string{}
		if deflate {
			args = append(args, "-deflate")
		}
		s := startServer(t, args...)
		s.waitHealthy(t, "http", &http.Client{Timeout: time.Second})
		chatOnce(t, &ws.Dialer{EnableCompression: true}, "ws://"+s.addr+"/ws")
		written[deflate] = s.stop(t)["bytes_written"].(float64)
	}
	// The chat's repeated text compresses to a fraction of itself.
	if !(written[true] > 0 && written[true] < written[false]) {
		t.Fatalf("bytes_written with deflate %v, without %v", written[true], written[false])
	}
}

func TestRefusesBadCertificatesAtStart(t *testing.T) {
	dir := t.TempDir()
	cert, _, _ := testCert(t, dir, 24*time.Hour)
	_, otherKey, _ := testCert(t, dir, 24*time.Hour)
	expiredCert, expiredKey, _ := testCert(t, dir, 30*time.Minute)
	for _, c := range []struct{ name, cert, key, want string }{
		{"a key that is not the certificate's", cert, otherKey, "private key does not match"},
		{"an expired certificate", expiredCert, expiredKey, "expired"},
		{"a missing key file", cert, filepath.Join(dir, "missing.pem"), "no such file"},
	} {
		s := startServer(t, "-tls-cert", c.cert, "-tls-key", c.key)
		err := s.cmd.Wait()
		if err == nil || !strings.Contains(s.stderr.String(), c.want) {
			t.Errorf("%s: exit %v, stderr %q; want a failure naming %q", c.name, err, s.stderr.String(), c.want)
		}
	}
}

func TestWithDeflateTheSizeLimitAppliesToTheInflatedMessage(t *testing.T) {
	s := startServer(t, "-deflate")
	s.waitHealthy(t, "http", &http.Client{Timeout: time.Second})
	dial := func() *ws.Conn {
		conn, resp, err := (&ws.Dialer{EnableCompression: true}).Dial("ws://"+s.addr+"/ws", nil)
		if err != nil || !strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate") {
			t.Fatalf("dial with deflate: %v", err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.EnableWriteCompression(true)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		return conn
	}
	// 4096 bytes, a few dozen once deflated: allowed, and the connection stays open.
	atLimit := dial()
	atLimit.WriteMessage(ws.TextMessage, []byte(strings.Repeat("x", 4096)))
	atLimit.WriteJSON(map[string]any{"type": "ping", "ts": 1})
	var pong map[string]any
	if err := atLimit.ReadJSON(&pong); err != nil || pong["type"] != "pong" {
		t.Fatalf("after 4096 bytes: %v, %v", pong, err)
	}
	// 4097 bytes, as small on the wire: closed with 1009.
	over := dial()
	over.WriteMessage(ws.TextMessage, []byte(strings.Repeat("x", 4097)))
	_, _, err := over.ReadMessage()
	if !ws.IsCloseError(err, ws.CloseMessageTooBig) {
		t.Fatalf("after 4097 bytes: want close 1009, got %v", err)
	}
	s.stop(t)
}
