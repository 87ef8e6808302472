package main

import (
	"encoding/json"
	"testing"
)

// testClient is a connection without a socket: the hub only ever touches a
// client's queue, so the tests read that queue directly.
func testClient(h *Hub, user string) *Client {
	c := newClient(h, nil)
	c.user = user
	if !h.register(c) {
		panic("hub refused a client")
	}
	return c
}

func joined(h *Hub, user string) *Client {
	c := testClient(h, user)
	c.handle([]byte(`{"type":"join","room":"public","user":"` + user + `"}`))
	return c
}

// members joins users in order and empties their queues of the joins.
func members(t *testing.T, h *Hub, users ...string) []*Client {
	t.Helper()
	var cs []*Client
	for _, u := range users {
		cs = append(cs, joined(h, u))
	}
	for _, c := range cs {
		queued(t, c)
	}
	return cs
}

// expectNothing fails if c's queue holds anything.
func expectNothing(t *testing.T, c *Client, why string) {
	t.Helper()
	if got := queued(t, c); len(got) != 0 {
		t.Errorf("%s: %s got %v", why, c.user, got)
	}
}

// expectLeave fails unless c's queue holds exactly user's leave with online.
func expectLeave(t *testing.T, c *Client, user string, online int) {
	t.Helper()
	got := queued(t, c)
	if len(got) != 1 || got[0]["type"] != "leave" || got[0]["user"] != user || got[0]["online"] != float64(online) {
		t.Errorf("%s got %v, want %s's leave with online %d", c.user, got, user, online)
	}
}

// expectClosing fails unless c was asked to close with code.
func expectClosing(t *testing.T, c *Client, code int) {
	t.Helper()
	select {
	case <-c.closing:
		if c.closeCode != code {
			t.Errorf("close code %d, want %d", c.closeCode, code)
		}
	default:
		t.Errorf("connection %q was not closed", c.user)
	}
}

// queued drains what c's queue holds, decoded.
func queued(t *testing.T, c *Client) []map[string]any {
	t.Helper()
	var out []map[string]any
	for {
		select {
		case m := <-c.send:
			var v map[string]any
			if err := json.Unmarshal(m.data, &v); err != nil {
				t.Fatalf("queued invalid JSON %q: %v", m.data, err)
			}
			out = append(out, v)
		default:
			return out
		}
	}
}

func TestJoinIsAnnouncedToEveryMemberIncludingTheJoiner(t *testing.T) {
	h := newHub(newStats("test"))
	alice := joined(h, "alice")
	if got := queued(t, alice); len(got) != 1 || got[0]["type"] != "join" || got[0]["online"] != 1.0 {
		t.Fatalf("alice's own join: %v", got)
	}
	bob := joined(h, "bob")
	for _, c := range []*Client{alice, bob} {
		got := queued(t, c)
		if len(got) != 1 || got[0]["type"] != "join" || got[0]["user"] != "bob" || got[0]["online"] != 2.0 {
			t.Errorf("%s got %v, want bob's join with online 2", c.user, got)
		}
	}
	if h.stats.joins.Load() != 2 {
		t.Errorf("joins = %d, want 2", h.stats.joins.Load())
	}
}

func TestSecondJoinIsIgnored(t *testing.T) {
	h := newHub(newStats("test"))
	alice := members(t, h, "alice")[0]
	alice.handle([]byte(`{"type":"join","room":"public","user":"alice2"}`))
	expectNothing(t, alice, "second join")
	if h.stats.joins.Load() != 1 || h.stats.malformed.Load() != 0 {
		t.Fatalf("joins = %d, malformed = %d, want 1 and 0", h.stats.joins.Load(), h.stats.malformed.Load())
	}
}

func TestChatReachesEveryOtherMemberButNotTheSender(t *testing.T) {
	h := newHub(newStats("test"))
	m := members(t, h, "alice", "bob", "carol")
	alice := m[0]
	lurker := testClient(h, "") // connected, never joined
	alice.handle([]byte(`{"type":"chat","room":"public","text":"hi","ts":12.50}`))
	expectNothing(t, alice, "the sender")
	expectNothing(t, lurker, "a connection that never joined")
	for _, c := range m[1:] {
		select {
		case m := <-c.send:
			want := `{"type":"chat","room":"public","user":"alice","text":"hi","ts":12.50}`
			if string(m.data) != want || !m.chat {
				t.Errorf("%s got %s (chat=%v), want %s", c.user, m.data, m.chat, want)
			}
		default:
			t.Errorf("%s got nothing", c.user)
		}
	}
	if h.stats.chatIn.Load() != 1 || h.stats.chatAccepted.Load() != 1 {
		t.Errorf("chat_in = %d, chat_accepted = %d, want 1 and 1", h.stats.chatIn.Load(), h.stats.chatAccepted.Load())
	}
}

func TestBroadcastIsSerializedOnceAndShared(t *testing.T) {
	h := newHub(newStats("test"))
	m := members(t, h, "alice", "bob", "carol")
	alice, bob, carol := m[0], m[1], m[2]
	alice.handle([]byte(`{"type":"chat","room":"public","text":"hi"}`))
	if a, b := <-bob.send, <-carol.send; a != b || &a.data[0] != &b.data[0] {
		t.Fatal("recipients got different copies of one broadcast")
	}
}

func TestChatBeforeJoinIsMalformedAndNotBroadcast(t *testing.T) {
	h := newHub(newStats("test"))
	bob := members(t, h, "bob")[0]
	stranger := testClient(h, "")
	stranger.handle([]byte(`{"type":"chat","room":"public","text":"hi"}`))
	stranger.handle([]byte(`{"type":"leave"}`))
	expectNothing(t, bob, "a chat and a leave before join")
	if h.stats.malformed.Load() != 2 || h.stats.chatIn.Load() != 0 {
		t.Fatalf("malformed = %d, chat_in = %d, want 2 and 0", h.stats.malformed.Load(), h.stats.chatIn.Load())
	}
}

func TestRateLimitDropsChatsBeyondTheBucket(t *testing.T) {
	h := newHub(newStats("test"))
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	clock := &fakeClock{}
	alice.limiter = newLimiter(clock.now)
	for range 30 {
		alice.handle([]byte(`{"type":"chat","room":"public","text":"x"}`))
	}
	if got := len(queued(t, bob)); got != 10 {
		t.Fatalf("bob got %d chats of a burst of 30, want 10", got)
	}
	s := h.stats
	if s.chatIn.Load() != 30 || s.chatAccepted.Load() != 10 || s.droppedRatelimit.Load() != 20 {
		t.Fatalf("chat_in %d, chat_accepted %d, dropped_ratelimit %d, want 30, 10, 20",
			s.chatIn.Load(), s.chatAccepted.Load(), s.droppedRatelimit.Load())
	}
}

func TestPingIsAnsweredToTheSenderOnlyEvenBeforeJoin(t *testing.T) {
	h := newHub(newStats("test"))
	bob := members(t, h, "bob")[0]
	c := testClient(h, "")
	c.handle([]byte(`{"type":"ping","ts":1732233445566}`))
	select {
	case m := <-c.send:
		if string(m.data) != `{"type":"pong","ts":1732233445566}` || m.chat {
			t.Fatalf("got %s", m.data)
		}
	default:
		t.Fatal("no pong")
	}
	expectNothing(t, bob, "another member, for a ping")
}

func TestLeaveIsAnnouncedToTheRemainingMembersAndClosesWith1000(t *testing.T) {
	h := newHub(newStats("test"))
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	alice.handle([]byte(`{"type":"leave"}`))
	expectLeave(t, bob, "alice", 1)
	expectNothing(t, alice, "the leaver")
	expectClosing(t, alice, 1000)
	// The reader ending afterwards must not announce the leave twice.
	h.unregister(alice)
	expectNothing(t, bob, "after the leaver's connection ended")
}

func TestDisconnectWithoutLeaveIsAnnouncedAsLeave(t *testing.T) {
	h := newHub(newStats("test"))
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	h.unregister(alice)
	expectLeave(t, bob, "alice", 1)
}

func TestSlowConsumerIsDroppedAndCountedWithoutBlocking(t *testing.T) {
	h := newHub(newStats("test"))
	alice, bob, slow := joined(h, "alice"), joined(h, "bob"), joined(h, "slow")
	queued(t, bob)
	// slow never drains its queue, which already holds its own join: the
	// first sendQueueSize-1 chats fit, the rest are dropped for slow only.
	const chats = 1000
	for range chats {
		h.chat(alice, "x", nil) // straight to the hub: no rate limit here
		queued(t, bob)          // bob keeps up
	}
	if got, want := h.stats.droppedSlow.Load(), int64(chats-(sendQueueSize-1)); got != want {
		t.Fatalf("dropped_slow = %d, want %d", got, want)
	}
	if got := len(slow.send); got != sendQueueSize {
		t.Fatalf("slow's queue holds %d, want %d", got, sendQueueSize)
	}
}

func TestShutdownClosesEveryConnectionAndRefusesNewOnes(t *testing.T) {
	h := newHub(newStats("test"))
	member, stranger := joined(h, "alice"), testClient(h, "")
	h.shutdown(1001)
	expectClosing(t, member, 1001)
	expectClosing(t, stranger, 1001)
	if h.register(newClient(h, nil)) {
		t.Error("a connection was registered after shutdown")
	}
}
