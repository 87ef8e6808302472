// Package chattest owns the Go servers' process tests: it runs a server as a
// child process (the test binary re-executed with WSC_TEST_SERVE=1 runs the
// server's main) and talks to it as a client would, over ws and wss (with a
// certificate it makes), with and without permessage-deflate, in one room and
// in several. Each server's server_test.go hands it its main and a Client
// made of its own WebSocket library, so both servers run the same tests.
package chattest

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
)

// Message types, as RFC 6455 numbers them and both libraries name them.
const (
	TextMessage = 1
)

// Conn is what the tests need of a client connection: gorilla's
// *websocket.Conn and fasthttp/websocket's alike.
type Conn interface {
	WriteJSON(v any) error
	ReadJSON(v any) error
	WriteMessage(messageType int, data []byte) error
	ReadMessage() (messageType int, data []byte, err error)
	SetReadDeadline(t time.Time) error
	EnableWriteCompression(enable bool)
	Close() error
}

// Client is a server's WebSocket library, as the tests use it.
type Client struct {
	// Dial opens a connection to url, trusting tlsConfig's roots for wss
	// (nil for ws) and offering permessage-deflate if deflate is set. It
	// returns the Sec-WebSocket-Extensions the server accepted.
	Dial func(url string, tlsConfig *tls.Config, deflate bool) (conn Conn, extensions string, err error)
	// CloseCode returns the close code of a read error that is a close
	// frame, or 0.
	CloseCode func(err error) int
}

// Main is the server's TestMain: in the re-executed child it runs serve
// (the server's main) and exits; otherwise it runs the tests.
func Main(m *testing.M, serve func()) {
	if os.Getenv("WSC_TEST_SERVE") == "1" {
		serve()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Run runs every process test against the server of this test binary.
func Run(t *testing.T, c Client) {
	tests := []struct {
		name string
		run  func(*testing.T, Client)
	}{
		{"ServesWssWithItsCertificateAndNegotiatesDeflate", servesWssWithItsCertificateAndNegotiatesDeflate},
		{"WithoutDeflateRefusesTheExtensionAndStillChats", withoutDeflateRefusesTheExtensionAndStillChats},
		{"CompressionMakesFewerBytesForTheSameChats", compressionMakesFewerBytesForTheSameChats},
		{"RefusesBadCertificatesAtStart", refusesBadCertificatesAtStart},
		{"WithDeflateTheSizeLimitAppliesToTheInflatedMessage", withDeflateTheSizeLimitAppliesToTheInflatedMessage},
		{"ChatsStayInTheirRoomAndLeavingOneRoomKeepsTheConnection", func(t *testing.T, c Client) { RoomsTest(t, c) }},
		{"FailsATextMessageThatIsNotUTF8With1007UnlessTheVariantSkipsTheCheck", failsATextMessageThatIsNotUTF8With1007},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) { test.run(t, c) })
	}
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

// dial opens a connection to url that closes with the test and fails a read
// that waits more than 5 s; it returns the extensions the server accepted.
func (c Client) dial(t *testing.T, url string, tlsConfig *tls.Config, deflate bool) (Conn, string) {
	t.Helper()
	conn, extensions, err := c.Dial(url, tlsConfig, deflate)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	return conn, extensions
}

// chatOnce joins alice and bob through c at url, has alice chat, and checks
// that bob receives it; it returns the extensions the server accepted.
func chatOnce(t *testing.T, c Client, url string, tlsConfig *tls.Config) string {
	t.Helper()
	join := func(user string) (Conn, string) {
		conn, extensions := c.dial(t, url, tlsConfig, true)
		conn.WriteJSON(map[string]string{"type": "join", "room": "public", "user": user})
		expect(t, conn, "join", user)
		return conn, extensions
	}
	alice, extensions := join("alice")
	bob, _ := join("bob")
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
func expect(t *testing.T, conn Conn, kind, user string) map[string]any {
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

func servesWssWithItsCertificateAndNegotiatesDeflate(t *testing.T, c Client) {
	cert, key, clientTLS := testCert(t, t.TempDir(), 24*time.Hour)
	s := startServer(t, "-tls-cert", cert, "-tls-key", key, "-deflate")
	https := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}, Timeout: time.Second}
	s.waitHealthy(t, "https", https)
	if ext := chatOnce(t, c, "wss://"+s.addr+"/ws", clientTLS); !strings.Contains(ext, "permessage-deflate") {
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

func withoutDeflateRefusesTheExtensionAndStillChats(t *testing.T, c Client) {
	s := startServer(t)
	s.waitHealthy(t, "http", &http.Client{Timeout: time.Second})
	if ext := chatOnce(t, c, "ws://"+s.addr+"/ws", nil); ext != "" {
		t.Fatalf("extensions accepted without -deflate: %q", ext)
	}
	s.stop(t)
}

func compressionMakesFewerBytesForTheSameChats(t *testing.T, c Client) {
	written := map[bool]float64{}
	for _, deflate := range []bool{false, true} {
		args := []string{}
		if deflate {
			args = append(args, "-deflate")
		}
		s := startServer(t, args...)
		s.waitHealthy(t, "http", &http.Client{Timeout: time.Second})
		chatOnce(t, c, "ws://"+s.addr+"/ws", nil)
		written[deflate] = s.stop(t)["bytes_written"].(float64)
	}
	// The chat's repeated text compresses to a fraction of itself.
	if !(written[true] > 0 && written[true] < written[false]) {
		t.Fatalf("bytes_written with deflate %v, without %v", written[true], written[false])
	}
}

func refusesBadCertificatesAtStart(t *testing.T, _ Client) {
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

func withDeflateTheSizeLimitAppliesToTheInflatedMessage(t *testing.T, c Client) {
	s := startServer(t, "-deflate")
	s.waitHealthy(t, "http", &http.Client{Timeout: time.Second})
	dial := func() Conn {
		conn, extensions := c.dial(t, "ws://"+s.addr+"/ws", nil, true)
		if !strings.Contains(extensions, "permessage-deflate") {
			t.Fatalf("dial with deflate: extensions %q", extensions)
		}
		conn.EnableWriteCompression(true)
		return conn
	}
	// 4096 bytes, a few dozen once deflated: allowed, and the connection stays open.
	atLimit := dial()
	atLimit.WriteMessage(TextMessage, []byte(strings.Repeat("x", 4096)))
	atLimit.WriteJSON(map[string]any{"type": "ping", "ts": 1})
	var pong map[string]any
	if err := atLimit.ReadJSON(&pong); err != nil || pong["type"] != "pong" {
		t.Fatalf("after 4096 bytes: %v, %v", pong, err)
	}
	// 4097 bytes, as small on the wire: closed with 1009.
	over := dial()
	over.WriteMessage(TextMessage, []byte(strings.Repeat("x", 4097)))
	_, _, err := over.ReadMessage()
	if code := c.CloseCode(err); code != 1009 {
		t.Fatalf("after 4097 bytes: want close 1009, got %v (code %d)", err, code)
	}
	s.stop(t)
}

func failsATextMessageThatIsNotUTF8With1007(t *testing.T, c Client) {
	invalid := []byte("{\"type\":\"ping\",\"ts\":1,\"x\":\"\xc3\"}") // cut short at \xc3
	s := startServer(t)
	s.waitHealthy(t, "http", &http.Client{Timeout: time.Second})
	conn, _ := c.dial(t, "ws://"+s.addr+"/ws", nil, false)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	conn.WriteMessage(TextMessage, invalid)
	if _, _, err := conn.ReadMessage(); c.CloseCode(err) != 1007 {
		t.Fatalf("invalid UTF-8: want close 1007, got %v", err)
	}
	s.stop(t)

	// The variant reads the message as it is: a ping, answered.
	s = startServer(t, "-no-utf8-check")
	s.waitHealthy(t, "http", &http.Client{Timeout: time.Second})
	conn, _ = c.dial(t, "ws://"+s.addr+"/ws", nil, false)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	conn.WriteMessage(TextMessage, invalid)
	var pong map[string]any
	if err := conn.ReadJSON(&pong); err != nil || pong["type"] != "pong" {
		t.Fatalf("-no-utf8-check: want a pong, got %v, %v", pong, err)
	}
	s.stop(t)
}

// RoomsTest checks, against the server started with args, that chats stay
// in their room and that leaving one room keeps the connection: Run runs it
// with none, and a server runs it again for each engine Run does not reach.
func RoomsTest(t *testing.T, c Client, args ...string) {
	s := startServer(t, args...)
	s.waitHealthy(t, "http", &http.Client{Timeout: time.Second})
	url := "ws://" + s.addr + "/ws"
	// next reads conn's next message and checks every field of want.
	next := func(conn Conn, want map[string]any) {
		t.Helper()
		var got map[string]any
		if err := conn.ReadJSON(&got); err != nil {
			t.Fatalf("waiting for %v: %v", want, err)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("want %v, got %v", want, got)
			}
		}
	}
	// nothingBut pings conn and checks that the pong is the next message:
	// nothing else was sent to it before.
	nothingBut := func(conn Conn) {
		t.Helper()
		conn.WriteJSON(map[string]any{"type": "ping", "ts": 7})
		next(conn, map[string]any{"type": "pong", "ts": 7.0})
	}
	join := func(conn Conn, room, user string, online float64) {
		t.Helper()
		conn.WriteJSON(map[string]string{"type": "join", "room": room, "user": user})
		next(conn, map[string]any{"type": "join", "room": room, "user": user, "online": online})
	}
	alice, _ := c.dial(t, url, nil, false)
	bob, _ := c.dial(t, url, nil, false)
	carol, _ := c.dial(t, url, nil, false)
	join(alice, "public", "alice", 1)
	join(bob, "public", "bob", 2)
	next(alice, map[string]any{"type": "join", "user": "bob"})
	join(alice, "lobby", "alice", 1)
	join(carol, "lobby", "carol", 2)
	next(alice, map[string]any{"type": "join", "room": "lobby", "user": "carol"})

	alice.WriteJSON(map[string]any{"type": "chat", "room": "lobby", "text": "psst"})
	next(carol, map[string]any{"type": "chat", "room": "lobby", "user": "alice", "text": "psst"})
	nothingBut(bob)
	bob.WriteJSON(map[string]any{"type": "chat", "room": "lobby", "text": "not a member"})
	nothingBut(bob) // bob's reader has handled his chat once it answers his ping
	nothingBut(alice)
	nothingBut(carol)

	alice.WriteJSON(map[string]any{"type": "leave", "room": "lobby"})
	next(carol, map[string]any{"type": "leave", "room": "lobby", "user": "alice", "online": 1.0})
	bob.WriteJSON(map[string]any{"type": "chat", "room": "public", "text": "still there?"})
	next(alice, map[string]any{"type": "chat", "room": "public", "user": "bob", "text": "still there?"})

	alice.WriteJSON(map[string]any{"type": "leave"})
	next(bob, map[string]any{"type": "leave", "room": "public", "user": "alice", "online": 1.0})
	_, _, err := alice.ReadMessage()
	if code := c.CloseCode(err); code != 1000 {
		t.Fatalf("after a leave without room: want close 1000, got %v", err)
	}
	stats := s.stop(t)
	if stats["joins"] != 4.0 || stats["malformed"] != 1.0 {
		t.Fatalf("joins %v, malformed %v; want 4 and 1", stats["joins"], stats["malformed"])
	}
}
