package chat

// The session logic against a real chat server (servers/profile-b/go, built
// and started by the tests) and, for what a correct server never does, a tiny
// gorilla server in the test.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

var (
	serverOnce sync.Once
	serverBin  string
	serverErr  error
)

// TestMain removes the server binary buildServer made.
func TestMain(m *testing.M) {
	code := m.Run()
	if serverBin != "" {
		_ = os.RemoveAll(filepath.Dir(serverBin))
	}
	os.Exit(code)
}

// buildServer builds servers/profile-b/go once per test binary.
func buildServer(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot build servers/profile-b/go for the session tests")
	}
	serverOnce.Do(func() {
		dir, err := os.MkdirTemp("", "k6-chat-test-")
		if err != nil {
			serverErr = err
			return
		}
		serverBin = filepath.Join(dir, "server")
		cmd := exec.Command(goBin, "build", "-o", serverBin, ".")
		cmd.Dir = filepath.Join("..", "..", "servers", "profile-b", "go")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			serverErr = fmt.Errorf("building servers/profile-b/go: %v\n%s", err, out)
		}
	})
	if serverErr != nil {
		t.Fatal(serverErr)
	}
	return serverBin
}

type chatServer struct {
	cmd      *exec.Cmd
	port     int
	killOnce sync.Once
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startServer runs the Go chat server on a free port until the test ends.
func startServer(t *testing.T) *chatServer {
	t.Helper()
	bin := buildServer(t)
	port := freePort(t)
	cmd := exec.Command(bin, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &chatServer{cmd: cmd, port: port}
	t.Cleanup(s.kill)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", port))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server on port %d never became healthy: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *chatServer) kill() {
	s.killOnce.Do(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
}

func (s *chatServer) url() string { return fmt.Sprintf("ws://127.0.0.1:%d/ws", s.port) }

func (s *chatServer) stats(t *testing.T) map[string]any {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/stats", s.port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (s *chatServer) stat(t *testing.T, name string) int64 {
	return int64(s.stats(t)[name].(float64))
}

// counts drains t into its totals and returns them by report name.
func counts(t *tally) map[string]int64 {
	t.drain()
	r := t.totals.report()
	return r.Counters
}

func wantCounts(t *testing.T, got map[string]int64, want map[string]int64) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

func TestSessionsChatReceiveAndLeaveCleanly(t *testing.T) {
	srv := startServer(t)
	tl := newTally(newTotals())
	now := time.Now()
	// Three clients chat 10/s; chats stop 1 s before they all leave, as in steady.
	var wg sync.WaitGroup
	for _, user := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClient(context.Background(), clientOptions{
				url: srv.url(), user: user, chats: 2, chatsPerSecond: 10,
				stopChatAt: now.Add(1500 * time.Millisecond), leaveAt: now.Add(2500 * time.Millisecond),
			}, tl)
		}()
	}
	wg.Wait()
	if d := time.Since(now); d > 4*time.Second {
		t.Errorf("sessions took %v, want about 2.5 s", d)
	}
	got := counts(tl)
	wantCounts(t, got, map[string]int64{
		"sessions": 3, "sessions_closed": 3, "connect_errors": 0, "abnormal_closes": 0, "ws_errors": 0, "malformed": 0,
	})
	if got["chat_sent"] < 3*(2+10) || got["chat_sent"] > 3*(2+16) {
		t.Errorf("chat_sent = %d, want about 3 x (2 + 15)", got["chat_sent"])
	}
	if want := srv.stat(t, "chat_in"); got["chat_sent"] != want {
		t.Errorf("chat_sent = %d, server chat_in = %d", got["chat_sent"], want)
	}
	if want := srv.stat(t, "deliveries"); got["chat_received"] != want || want == 0 {
		t.Errorf("chat_received = %d, server deliveries = %d", got["chat_received"], want)
	}
	// join echo x3 seen, joins of others, chats, leaves of others: at least chats + own joins.
	if got["msgs_received"] < got["chat_received"]+3 {
		t.Errorf("msgs_received = %d, want >= chat_received + 3 joins", got["msgs_received"])
	}
	// join + chats + leave per client
	if got["msgs_sent"] != got["chat_sent"]+6 {
		t.Errorf("msgs_sent = %d, want chat_sent + 3 joins + 3 leaves", got["msgs_sent"])
	}
	h := tl.totals.report().LatencyUs
	if h.TotalCount != got["chat_received"] {
		t.Errorf("latency count = %d, want one per chat received (%d)", h.TotalCount, got["chat_received"])
	}
	if p99 := h.Histogram().ValueAtQuantile(99); p99 <= 0 || p99 > 1_000_000 {
		t.Errorf("p99 latency = %d µs, want loopback-sized (0, 1 s]", p99)
	}
	// The server saw every close handshake complete: nothing left open.
	waitFor(t, 2*time.Second, func() bool { return srv.stat(t, "connections_current") == 0 },
		"server still has connections open after the leaves")
	if n := srv.stat(t, "malformed"); n != 0 {
		t.Errorf("server counted %d malformed frames from us", n)
	}
}

// Two instances of a split run in one room: each keeps the latency of its own
// instance's chats in the main histogram and the other's apart, and together
// they still count every delivery once.
func TestChatsFromAnotherInstanceAreTimedApart(t *testing.T) {
	srv := startServer(t)
	totals := [2]*totals{newTotals(), newTotals()}
	tallies := [2]*tally{newTally(totals[0]), newTally(totals[1])}
	now := time.Now()
	var wg sync.WaitGroup
	for i, user := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClient(context.Background(), clientOptions{
				url: srv.url(), user: user, chats: 3, instance: i%2 + 1,
				leaveAt: now.Add(1500 * time.Millisecond),
			}, tallies[i%2])
		}()
	}
	wg.Wait()
	var received, own, cross int64
	for i := range totals {
		got := counts(tallies[i])
		received += got["chat_received"]
		r := totals[i].report()
		own += r.LatencyUs.TotalCount
		cross += r.CrossLatencyUs.TotalCount
		if r.CrossLatencyUs.TotalCount == 0 || r.LatencyUs.TotalCount == 0 {
			t.Errorf("instance %d: own %d, cross %d; want both > 0 (4 clients, 2 per instance, all chatting)",
				i+1, r.LatencyUs.TotalCount, r.CrossLatencyUs.TotalCount)
		}
	}
	if want := srv.stat(t, "deliveries"); received != want || own+cross != want {
		t.Errorf("received %d, own %d + cross %d; server deliveries %d", received, own, cross, want)
	}
}

func waitFor(t *testing.T, d time.Duration, ok func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStayMsLeavesAfterTheJoin(t *testing.T) {
	srv := startServer(t)
	tl := newTally(newTotals())
	start := time.Now()
	runClient(context.Background(), clientOptions{url: srv.url(), user: "stayer", chats: 1, stay: 300 * time.Millisecond, hasStay: true}, tl)
	if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
		t.Errorf("session took %v, want a bit over 300 ms", d)
	}
	wantCounts(t, counts(tl), map[string]int64{"sessions": 1, "sessions_closed": 1, "abnormal_closes": 0, "chat_sent": 1, "msgs_sent": 3})
}

func TestServerKilledMidSessionIsAnAbnormalClose(t *testing.T) {
	srv := startServer(t)
	tl := newTally(newTotals())
	go func() {
		time.Sleep(300 * time.Millisecond)
		srv.kill()
	}()
	start := time.Now()
	runClient(context.Background(), clientOptions{url: srv.url(), user: "victim", chatsPerSecond: 5, leaveAt: time.Now().Add(30 * time.Second)}, tl)
	// retryPause (1 s) after the abnormal close, nothing more.
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("runClient returned after %v, want about 1.3 s", d)
	}
	wantCounts(t, counts(tl), map[string]int64{"sessions": 1, "sessions_closed": 1, "abnormal_closes": 1, "ws_errors": 1, "connect_errors": 0})
}

func TestRefusedConnectionIsAConnectError(t *testing.T) {
	tl := newTally(newTotals())
	runClient(context.Background(), clientOptions{url: fmt.Sprintf("ws://127.0.0.1:%d/ws", freePort(t)), user: "nobody", stay: 0, hasStay: true}, tl)
	wantCounts(t, counts(tl), map[string]int64{"sessions": 1, "sessions_closed": 0, "connect_errors": 1, "ws_errors": 1, "abnormal_closes": 0})
}

func TestCancelledContextReturnsPromptly(t *testing.T) {
	srv := startServer(t)
	tl := newTally(newTotals())
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	runClient(ctx, clientOptions{url: srv.url(), user: "cut", chatsPerSecond: 5, leaveAt: time.Now().Add(30 * time.Second)}, tl)
	if d := time.Since(start); d > 800*time.Millisecond {
		t.Errorf("runClient returned %v after start, want within ~300 ms + cutOffWait", d)
	}
	// Cut off: neither closed nor abnormal, like a session k6/websockets cuts off.
	wantCounts(t, counts(tl), map[string]int64{"sessions": 1, "sessions_closed": 0, "abnormal_closes": 0, "ws_errors": 0})
	// It still closed with 1000: the server answered and let go.
	waitFor(t, 2*time.Second, func() bool { return srv.stat(t, "connections_current") == 0 }, "server still holds the cut-off connection")
}

// fakeServer upgrades /ws and runs serve on each connection.
func fakeServer(t *testing.T, serve func(*websocket.Conn)) string {
	t.Helper()
	up := websocket.Upgrader{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}))
	t.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
}

// closedOnLeave: msg is a leave, answered like a chat server: a close with
// 1000, then the client's reply.
func closedOnLeave(c *websocket.Conn, msg []byte) bool {
	if string(msg) != `{"type":"leave"}` {
		return false
	}
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""), time.Now().Add(time.Second))
	_, _, _ = c.ReadMessage() // the close reply
	return true
}

func TestMalformedFramesAreCountedNotFatal(t *testing.T) {
	url := fakeServer(t, func(c *websocket.Conn) {
		_, _, _ = c.ReadMessage() // the join
		_ = c.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3})
		_ = c.WriteMessage(websocket.TextMessage, []byte("not json"))
		_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"join","room":"public","user":"m","online":1}`))
		_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"chat","room":"public","user":"x","text":"hi","ts":`+
			strconv.FormatFloat(float64(time.Now().UnixMicro())/1000, 'f', 3, 64)+`}`))
		for { // until leave, then close like a chat server
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if closedOnLeave(c, msg) {
				return
			}
		}
	})
	tl := newTally(newTotals())
	runClient(context.Background(), clientOptions{url: url, user: "m", stay: 200 * time.Millisecond, hasStay: true}, tl)
	wantCounts(t, counts(tl), map[string]int64{
		"malformed": 2, "msgs_received": 4, "chat_received": 1, "sessions_closed": 1, "abnormal_closes": 0, "ws_errors": 0,
	})
	if n := tl.totals.report().LatencyUs.TotalCount; n != 1 {
		t.Errorf("latencies recorded = %d, want 1", n)
	}
}

func TestStalledServerIsAbnormalAndBounded(t *testing.T) {
	// Upgrades, then never answers anything, not even a close.
	url := fakeServer(t, func(c *websocket.Conn) {
		c.SetCloseHandler(func(int, string) error { return nil })
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	})
	tl := newTally(newTotals())
	start := time.Now()
	runClient(context.Background(), clientOptions{url: url, user: "s", leaveAt: time.Now().Add(100 * time.Millisecond)}, tl)
	// leave, closeWait, closePatience, retryPause
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("runClient took %v against a stalled server", d)
	}
	wantCounts(t, counts(tl), map[string]int64{"sessions_closed": 1, "abnormal_closes": 1, "ws_errors": 1})
}

func TestChatFrameStampsEpochMillisecondsToTheMicrosecond(t *testing.T) {
	at := time.UnixMicro(1763900000123456)
	got := string(chatFrame("public", at, 0, 0))
	want := `{"type":"chat","room":"public","text":"hello from k6","ts":1763900000123.456}`
	if got != want {
		t.Fatalf("chatFrame = %s, want %s", got, want)
	}
	stamped := chatFrame("public", at, 12, 0)
	if want := `{"type":"chat","room":"public","text":"hello from k6 #12","ts":1763900000123.456}`; string(stamped) != want {
		t.Fatalf("chatFrame(instance 12) = %s, want %s", stamped, want)
	}
	held := chatFrame("public", at, 12, 2_000_345)
	if want := `{"type":"chat","room":"public","text":"hello from k6 #12 +2000345","ts":1763900000123.456}`; string(held) != want {
		t.Fatalf("chatFrame(instance 12, held 2000345 µs) = %s, want %s", held, want)
	}
	// As a server broadcasts them, with the user before the text.
	for frame, want := range map[string][2]int64{
		`{"type":"chat","room":"public","user":"k6-1-3-0","text":"hello from k6 #12","ts":1.5}`:          {12, 0},
		`{"type":"chat","room":"public","user":"k6-1-3-0","text":"hello from k6 #12 +2000345","ts":1.5}`: {12, 2_000_345},
		`{"type":"chat","room":"public","user":"k6-1-3-0","text":"hello from k6 +17","ts":1.5}`:          {0, 17},
		want: {0, 0},
	} {
		if n, us := chatStamp([]byte(frame)); int64(n) != want[0] || us != want[1] {
			t.Errorf("chatStamp(%s) = %d, %d; want %v", frame, n, us, want)
		}
	}
	if v, ok := parseNumber([]byte(" 1763900000123.456}")); !ok || v != 1763900000123.456 {
		t.Errorf("parseNumber = %v %v", v, ok)
	}
	if _, ok := parseNumber([]byte(`"x"}`)); ok {
		t.Error("parseNumber accepted a string")
	}
}

// sourcesOf dials a loopback listener n times from sources and returns how
// many connections came from each address.
func sourcesOf(t *testing.T, n int, sources []net.IP) map[string]int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan string, n)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			seen <- host
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := dialSpread(context.Background(), "tcp", ln.Addr().String(), sources, nil)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		c.Close()
	}
	count := map[string]int{}
	for i := 0; i < n; i++ {
		count[<-seen]++
	}
	return count
}

func TestLoopbackConnectionsComeFromEightSourceAddresses(t *testing.T) {
	sources := sourcesOf(t, 16, nil)
	if len(sources) != len(defaultSources) {
		t.Fatalf("16 connections came from %d addresses, want %d: %v", len(sources), len(defaultSources), sources)
	}
	for src, n := range sources {
		if ip := net.ParseIP(src); ip == nil || !ip.IsLoopback() || src == "127.0.0.1" || n != 2 {
			t.Fatalf("source %s used %d times; want 127.0.0.2-9 twice each: %v", src, n, sources)
		}
	}
}

func TestConnectionsComeFromTheSourceAddressesGivenInTurn(t *testing.T) {
	given := []net.IP{net.IPv4(127, 0, 1, 1), net.IPv4(127, 0, 1, 2), net.IPv4(127, 0, 1, 3)}
	sources := sourcesOf(t, 9, given)
	want := map[string]int{"127.0.1.1": 3, "127.0.1.2": 3, "127.0.1.3": 3}
	if fmt.Sprint(sources) != fmt.Sprint(want) {
		t.Fatalf("9 connections came from %v, want %v", sources, want)
	}
}

// One probe and three clients that only count, in one room: every chat is
// counted for every client, and only the probe's are timed.
func TestEveryClientCountsEveryChatAndOnlyProbesTimeThem(t *testing.T) {
	srv := startServer(t)
	tl := newTally(newTotals())
	now := time.Now()
	var wg sync.WaitGroup
	for i, user := range []string{"probe", "c1", "c2", "c3"} {
		o := clientOptions{
			url: srv.url(), user: user, chatsPerSecond: 20, countOnly: i > 0,
			stopChatAt: now.Add(1500 * time.Millisecond), leaveAt: now.Add(2500 * time.Millisecond),
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClient(context.Background(), o, tl)
		}()
	}
	wg.Wait()
	got := counts(tl)
	wantCounts(t, got, map[string]int64{
		"sessions": 4, "sessions_closed": 4, "connect_errors": 0, "abnormal_closes": 0, "ws_errors": 0, "malformed": 0,
	})
	if want := srv.stat(t, "deliveries"); got["chat_received"] != want || want == 0 {
		t.Errorf("chat_received = %d, server deliveries = %d", got["chat_received"], want)
	}
	// Each client receives the other three's chats: the probe a quarter of them.
	timed := tl.totals.report().LatencyUs.TotalCount
	if quarter := got["chat_received"] / 4; timed < quarter*7/10 || timed > quarter*13/10 {
		t.Errorf("latencies recorded = %d, want the probe's share, about %d of %d", timed, quarter, got["chat_received"])
	}
}
