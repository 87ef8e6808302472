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
	alice := joined(h, "alice")
	queued(t, alice)
	alice.handle([]byte(`{"type":"join","room":"public","user":"alice2"}`))
	if got := queued(t, alice); len(got) != 0 {
		t.Fatalf("second join broadcast %v", got)
	}
	if h.stats.joins.Load() != 1 || h.stats.malformed.Load() != 0 {
		t.Fatalf("joins = %d, malformed = %d, want 1 and 0", h.stats.joins.Load(), h.stats.malformed.Load())
	}
}

func TestChatReachesEveryOtherMemberButNotTheSender(t *testing.T) {
	h := newHub(newStats("test"))
	alice, bob, carol := joined(h, "alice"), joined(h, "bob"), joined(h, "carol")
	lurker := testClient(h, "") // connected, never joined
	for _, c := range []*Client{alice, bob, carol} {
		queued(t, c)
	}
	alice.handle([]byte(`{"type":"chat","room":"public","text":"hi","ts":12.50}`))
	if got := queued(t, alice); len(got) != 0 {
		t.Errorf("the sender got %v", got)
	}
	if got := queued(t, lurker); len(got) != 0 {
		t.Errorf("a connection that never joined got %v", got)
	}
	for _, c := range []*Client{bob, carol} {
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
	alice, bob, carol := joined(h, "alice"), joined(h, "bob"), joined(h, "carol")
	queued(t, bob)
	queued(t, carol)
	alice.handle([]byte(`{"type":"chat","room":"public","text":"hi"}`))
	if a, b := <-bob.send, <-carol.send; a != b || &a.data[0] != &b.data[0] {
		t.Fatal("recipients got different copies of one broadcast")
	}
}

func TestChatBeforeJoinIsMalformedAndNotBroadcast(t *testing.T) {
	h := newHub(newStats("test"))
	bob := joined(h, "bob")
	queued(t, bob)
	stranger := testClient(h, "")
	stranger.handle([]byte(`{"type":"chat","room":"public","text":"hi"}`))
	stranger.handle([]byte(`{"type":"leave"}`))
	if got := queued(t, bob); len(got) != 0 {
		t.Fatalf("bob got %v", got)
	}
	if h.stats.malformed.Load() != 2 || h.stats.chatIn.Load() != 0 {
		t.Fatalf("malformed = %d, chat_in = %d, want 2 and 0", h.stats.malformed.Load(), h.stats.chatIn.Load())
	}
}

func TestRateLimitDropsChatsBeyondTheBucket(t *testing.T) {
	h := newHub(newStats("test"))
	alice, bob := joined(h, "alice"), joined(h, "bob")
	clock := &fakeClock{}
	alice.limiter = newLimiter(clock.now)
	queued(t, bob)
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
	bob := joined(h, "bob")
	queued(t, bob)
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
	if got := queued(t, bob); len(got) != 0 {
		t.Fatalf("bob got %v", got)
	}
}

func TestLeaveIsAnnouncedToTheRemainingMembersAndClosesWith1000(t *testing.T) {
	h := newHub(newStats("test"))
	alice, bob := joined(h, "alice"), joined(h, "bob")
	queued(t, alice)
	queued(t, bob)
	alice.handle([]byte(`{"type":"leave"}`))
	if got := queued(t, bob); len(got) != 1 || got[0]["type"] != "leave" || got[0]["user"] != "alice" || got[0]["online"] != 1.0 {
		t.Fatalf("bob got %v, want alice's leave with online 1", got)
	}
	if got := queued(t, alice); len(got) != 0 {
		t.Fatalf("the leaver got %v", got)
	}
	select {
	case <-alice.closing:
		if alice.closeCode != 1000 {
			t.Fatalf("close code %d, want 1000", alice.closeCode)
		}
	default:
		t.Fatal("leave did not close the connection")
	}
	// The reader ending afterwards must not announce the leave twice.
	h.unregister(alice)
	if got := queued(t, bob); len(got) != 0 {
		t.Fatalf("bob got %v after alice's connection ended", got)
	}
}

func TestDisconnectWithoutLeaveIsAnnouncedAsLeave(t *testing.T) {
	h := newHub(newStats("test"))
	alice, bob := joined(h, "alice"), joined(h, "bob")
	queued(t, bob)
	h.unregister(alice)
	if got := queued(t, bob); len(got) != 1 || got[0]["type"] != "leave" || got[0]["user"] != "alice" || got[0]["online"] != 1.0 {
		t.Fatalf("bob got %v, want alice's leave with online 1", got)
	}
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
	for _, c := range []*Client{member, stranger} {
		select {
		case <-c.closing:
			if c.closeCode != 1001 {
				t.Errorf("close code %d, want 1001", c.closeCode)
			}
		default:
			t.Error("a connection was left open")
		}
	}
	if h.register(newClient(h, nil)) {
		t.Error("a connection was registered after shutdown")
	}
}
