package chat

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// testMember is a connection without a socket: the hub only ever touches a
// member's queue, so the tests read that queue directly.
func testMember(h *Hub, user string) *Member {
	c := NewMember(h)
	c.user = user
	if !h.Register(c) {
		panic("hub refused a member")
	}
	return c
}

func joined(h *Hub, user string) *Member {
	c := testMember(h, user)
	c.Handle([]byte(`{"type":"join","room":"public","user":"` + user + `"}`))
	return c
}

// members joins users in order and empties their queues of the joins.
func members(t *testing.T, h *Hub, users ...string) []*Member {
	t.Helper()
	var cs []*Member
	for _, u := range users {
		cs = append(cs, joined(h, u))
	}
	for _, c := range cs {
		queued(t, c)
	}
	return cs
}

// expectNothing fails if c's queue holds anything.
func expectNothing(t *testing.T, c *Member, why string) {
	t.Helper()
	if got := queued(t, c); len(got) != 0 {
		t.Errorf("%s: %s got %v", why, c.user, got)
	}
}

// expectLeave fails unless c's queue holds exactly user's leave with online.
func expectLeave(t *testing.T, c *Member, user string, online int) {
	t.Helper()
	got := queued(t, c)
	if len(got) != 1 || got[0]["type"] != "leave" || got[0]["user"] != user || got[0]["online"] != float64(online) {
		t.Errorf("%s got %v, want %s's leave with online %d", c.user, got, user, online)
	}
}

// expectClosing fails unless c was asked to close with code.
func expectClosing(t *testing.T, c *Member, code int) {
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
func queued(t *testing.T, c *Member) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range c.Take(nil) {
		var v map[string]any
		if err := json.Unmarshal(m.Data, &v); err != nil {
			t.Fatalf("queued invalid JSON %q: %v", m.Data, err)
		}
		out = append(out, v)
	}
	return out
}

// one takes c's queue, which must hold exactly one message.
func one(t *testing.T, c *Member) *Outbound {
	t.Helper()
	got := c.Take(nil)
	if len(got) != 1 {
		t.Fatalf("%q's queue held %d messages, want 1", c.user, len(got))
	}
	return got[0]
}

func TestJoinIsAnnouncedToEveryMemberIncludingTheJoiner(t *testing.T) {
	h := NewHub(NewStats("test"))
	alice := joined(h, "alice")
	if got := queued(t, alice); len(got) != 1 || got[0]["type"] != "join" || got[0]["online"] != 1.0 {
		t.Fatalf("alice's own join: %v", got)
	}
	bob := joined(h, "bob")
	for _, c := range []*Member{alice, bob} {
		got := queued(t, c)
		if len(got) != 1 || got[0]["type"] != "join" || got[0]["user"] != "bob" || got[0]["online"] != 2.0 {
			t.Errorf("%s got %v, want bob's join with online 2", c.user, got)
		}
	}
	if h.Stats.Joins.Load() != 2 {
		t.Errorf("joins = %d, want 2", h.Stats.Joins.Load())
	}
}

func TestSecondJoinIsIgnored(t *testing.T) {
	h := NewHub(NewStats("test"))
	alice := members(t, h, "alice")[0]
	alice.Handle([]byte(`{"type":"join","room":"public","user":"alice2"}`))
	expectNothing(t, alice, "second join")
	if h.Stats.Joins.Load() != 1 || h.Stats.Malformed.Load() != 0 {
		t.Fatalf("joins = %d, malformed = %d, want 1 and 0", h.Stats.Joins.Load(), h.Stats.Malformed.Load())
	}
}

func TestChatReachesEveryOtherMemberButNotTheSender(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob", "carol")
	alice := m[0]
	lurker := testMember(h, "") // connected, never joined
	alice.Handle([]byte(`{"type":"chat","room":"public","text":"hi","ts":12.50}`))
	expectNothing(t, alice, "the sender")
	expectNothing(t, lurker, "a connection that never joined")
	for _, c := range m[1:] {
		m := one(t, c)
		want := `{"type":"chat","room":"public","user":"alice","text":"hi","ts":12.50}`
		if string(m.Data) != want || !m.Chat {
			t.Errorf("%s got %s (chat=%v), want %s", c.user, m.Data, m.Chat, want)
		}
	}
	if h.Stats.ChatIn.Load() != 1 || h.Stats.ChatAccepted.Load() != 1 {
		t.Errorf("chat_in = %d, chat_accepted = %d, want 1 and 1", h.Stats.ChatIn.Load(), h.Stats.ChatAccepted.Load())
	}
}

func TestBroadcastIsSerializedOnceAndShared(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob", "carol")
	alice, bob, carol := m[0], m[1], m[2]
	alice.Handle([]byte(`{"type":"chat","room":"public","text":"hi"}`))
	if a, b := one(t, bob), one(t, carol); a != b || &a.Data[0] != &b.Data[0] {
		t.Fatal("recipients got different copies of one broadcast")
	}
}

func TestChatBeforeJoinIsMalformedAndNotBroadcast(t *testing.T) {
	h := NewHub(NewStats("test"))
	bob := members(t, h, "bob")[0]
	stranger := testMember(h, "")
	stranger.Handle([]byte(`{"type":"chat","room":"public","text":"hi"}`))
	stranger.Handle([]byte(`{"type":"leave"}`))
	expectNothing(t, bob, "a chat and a leave before join")
	if h.Stats.Malformed.Load() != 2 || h.Stats.ChatIn.Load() != 0 {
		t.Fatalf("malformed = %d, chat_in = %d, want 2 and 0", h.Stats.Malformed.Load(), h.Stats.ChatIn.Load())
	}
}

func TestRateLimitDropsChatsBeyondTheBucket(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	clock := &fakeClock{}
	alice.limiter = newLimiter(clock.now)
	for range 30 {
		alice.Handle([]byte(`{"type":"chat","room":"public","text":"x"}`))
	}
	if got := len(queued(t, bob)); got != 10 {
		t.Fatalf("bob got %d chats of a burst of 30, want 10", got)
	}
	s := h.Stats
	if s.ChatIn.Load() != 30 || s.ChatAccepted.Load() != 10 || s.DroppedRatelimit.Load() != 20 {
		t.Fatalf("chat_in %d, chat_accepted %d, dropped_ratelimit %d, want 30, 10, 20",
			s.ChatIn.Load(), s.ChatAccepted.Load(), s.DroppedRatelimit.Load())
	}
}

func TestPingIsAnsweredToTheSenderOnlyEvenBeforeJoin(t *testing.T) {
	h := NewHub(NewStats("test"))
	bob := members(t, h, "bob")[0]
	c := testMember(h, "")
	c.Handle([]byte(`{"type":"ping","ts":1732233445566}`))
	if m := one(t, c); string(m.Data) != `{"type":"pong","ts":1732233445566}` || m.Chat {
		t.Fatalf("got %s", m.Data)
	}
	expectNothing(t, bob, "another member, for a ping")
}

func TestLeaveIsAnnouncedToTheRemainingMembersAndClosesWith1000(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	alice.Handle([]byte(`{"type":"leave"}`))
	expectLeave(t, bob, "alice", 1)
	expectNothing(t, alice, "the leaver")
	expectClosing(t, alice, 1000)
	// The reader ending afterwards must not announce the leave twice.
	h.Unregister(alice)
	expectNothing(t, bob, "after the leaver's connection ended")
}

func TestDisconnectWithoutLeaveIsAnnouncedAsLeave(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	h.Unregister(alice)
	expectLeave(t, bob, "alice", 1)
}

func TestSlowConsumerIsDroppedAndCountedWithoutBlocking(t *testing.T) {
	h := NewHub(NewStats("test"))
	alice, bob, slow := joined(h, "alice"), joined(h, "bob"), joined(h, "slow")
	queued(t, bob)
	// slow never drains its queue, which already holds its own join: the
	// first QueueSize-1 chats fit, the rest are dropped for slow only.
	const chats = 1000
	for range chats {
		h.chat(alice, h.rooms["public"], "x", nil) // straight to the hub: no rate limit here
		queued(t, bob)                             // bob keeps up
	}
	if got, want := h.Stats.DroppedSlow.Load(), int64(chats-(QueueSize-1)); got != want {
		t.Fatalf("dropped_slow = %d, want %d", got, want)
	}
	if got := len(slow.Take(nil)); got != QueueSize {
		t.Fatalf("slow's queue holds %d, want %d", got, QueueSize)
	}
}

func TestShutdownClosesEveryConnectionAndRefusesNewOnes(t *testing.T) {
	h := NewHub(NewStats("test"))
	member, stranger := joined(h, "alice"), testMember(h, "")
	h.Shutdown(1001)
	expectClosing(t, member, 1001)
	expectClosing(t, stranger, 1001)
	if h.Register(NewMember(h)) {
		t.Error("a connection was registered after shutdown")
	}
}

func TestEchoChatToSenderAlsoDeliversToTheSender(t *testing.T) {
	// The fault switch of profile-b/go's fault_echo test build; never set in a real build.
	h := NewHub(NewStats("test"))
	h.EchoChatToSender = true
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	alice.Handle([]byte(`{"type":"chat","room":"public","text":"hi"}`))
	for _, c := range []*Member{alice, bob} {
		if got := queued(t, c); len(got) != 1 || got[0]["type"] != "chat" || got[0]["user"] != "alice" {
			t.Errorf("%s got %v, want alice's chat", c.user, got)
		}
	}
}

func TestMembersWhoLeaveInAnyOrderLeaveEveryOtherMemberReachable(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "a", "b", "c", "d", "e")
	public := h.rooms["public"]
	// From the middle, the end and the start of the room's list, each leave
	// moving another member into the gap.
	for i, gone := range []*Member{m[2], m[4], m[0]} {
		gone.Handle([]byte(`{"type":"leave","room":"public"}`))
		for _, c := range m {
			queued(t, c)
		}
		if len(gone.rooms) != 0 || len(public.members) != 4-i {
			t.Fatalf("after %s left: in %d rooms, %d members", gone.user, len(gone.rooms), len(public.members))
		}
	}
	m[1].Handle([]byte(`{"type":"chat","room":"public","text":"still here?"}`))
	if got := queued(t, m[3]); len(got) != 1 || got[0]["text"] != "still here?" {
		t.Errorf("d got %v, want b's chat", got)
	}
	for _, c := range []*Member{m[0], m[2], m[4]} {
		expectNothing(t, c, "a member who left")
	}
	h.Unregister(m[3])
	m[1].Handle([]byte(`{"type":"chat","room":"public","text":"alone"}`))
	if len(public.members) != 1 || public.members[0] != m[1] || m[1].rooms[0].index != 0 {
		t.Errorf("the one member left is not the room's only member at index 0")
	}
}

// joinRoom has c join room and empties the queues of everyone in watchers.
func joinRoom(t *testing.T, c *Member, room string, watchers ...*Member) {
	t.Helper()
	c.Handle([]byte(`{"type":"join","room":"` + room + `","user":"` + c.user + `"}`))
	for _, w := range append(watchers, c) {
		queued(t, w)
	}
}

func TestAChatReachesTheOtherMembersOfItsRoomOnly(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob", "carol")
	alice, bob, carol := m[0], m[1], m[2]
	joinRoom(t, alice, "lobby", m...)
	joinRoom(t, carol, "lobby", m...)
	alice.Handle([]byte(`{"type":"chat","room":"lobby","text":"psst"}`))
	if got := queued(t, carol); len(got) != 1 || got[0]["room"] != "lobby" || got[0]["text"] != "psst" {
		t.Errorf("carol got %v, want alice's chat in lobby", got)
	}
	expectNothing(t, bob, "a member of public only, for a chat in lobby")
	expectNothing(t, alice, "the sender")
	bob.Handle([]byte(`{"type":"chat","room":"public","text":"all"}`))
	for _, c := range []*Member{alice, carol} {
		if got := queued(t, c); len(got) != 1 || got[0]["room"] != "public" {
			t.Errorf("%s got %v, want bob's chat in public", c.user, got)
		}
	}
}

func TestOnlineCountsTheMembersOfTheJoinedRoomOnly(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob", "carol")
	m[0].Handle([]byte(`{"type":"join","room":"lobby","user":"ignored"}`))
	got := queued(t, m[0])
	if len(got) != 1 || got[0]["room"] != "lobby" || got[0]["online"] != 1.0 || got[0]["user"] != "alice" {
		t.Fatalf("alice's join to lobby: %v, want it under her first name with online 1", got)
	}
	expectNothing(t, m[1], "a member of public only, for a join to lobby")
	m[1].Handle([]byte(`{"type":"join","room":"lobby","user":"bob"}`))
	for _, c := range m[:2] {
		if got := queued(t, c); len(got) != 1 || got[0]["user"] != "bob" || got[0]["online"] != 2.0 {
			t.Errorf("%s got %v, want bob's join to lobby with online 2", c.user, got)
		}
	}
	if h.Stats.Joins.Load() != 5 {
		t.Errorf("joins = %d, want 5 (one per room joined)", h.Stats.Joins.Load())
	}
}

func TestASecondJoinToARoomIsIgnoredWhileInOthers(t *testing.T) {
	h := NewHub(NewStats("test"))
	alice := members(t, h, "alice")[0]
	joinRoom(t, alice, "lobby")
	alice.Handle([]byte(`{"type":"join","room":"public","user":"alice"}`))
	expectNothing(t, alice, "a second join to public")
	if len(alice.rooms) != 2 || h.Stats.Joins.Load() != 2 || h.Stats.Malformed.Load() != 0 {
		t.Fatalf("in %d rooms, joins %d, malformed %d; want 2, 2, 0", len(alice.rooms), h.Stats.Joins.Load(), h.Stats.Malformed.Load())
	}
}

func TestLeavingOneRoomKeepsTheConnectionInItsOthers(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	joinRoom(t, alice, "lobby", bob)
	joinRoom(t, bob, "lobby", alice)
	alice.Handle([]byte(`{"type":"leave","room":"lobby"}`))
	got := queued(t, bob)
	if len(got) != 1 || got[0]["type"] != "leave" || got[0]["room"] != "lobby" || got[0]["online"] != 1.0 {
		t.Fatalf("bob got %v, want alice's leave of lobby with online 1", got)
	}
	expectNothing(t, alice, "the leaver")
	select {
	case <-alice.Closing():
		t.Fatal("a leave of one room closed the connection")
	default:
	}
	alice.Handle([]byte(`{"type":"chat","room":"lobby","text":"gone?"}`))
	expectNothing(t, bob, "a chat to a room its sender left")
	alice.Handle([]byte(`{"type":"chat","room":"public","text":"here"}`))
	if got := queued(t, bob); len(got) != 1 || got[0]["text"] != "here" {
		t.Errorf("bob got %v, want alice's chat in public", got)
	}
	if h.Stats.Malformed.Load() != 1 {
		t.Errorf("malformed = %d, want 1 (the chat to lobby)", h.Stats.Malformed.Load())
	}
}

func TestLeavingARoomOneIsNotInIsMalformed(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob")
	joinRoom(t, m[1], "lobby", m[0])
	m[0].Handle([]byte(`{"type":"leave","room":"lobby"}`))
	m[0].Handle([]byte(`{"type":"leave","room":""}`))
	expectNothing(t, m[1], "a leave of a room the leaver is not in")
	if h.Stats.Malformed.Load() != 2 || len(m[0].rooms) != 1 {
		t.Fatalf("malformed %d, alice in %d rooms; want 2 and 1", h.Stats.Malformed.Load(), len(m[0].rooms))
	}
}

func TestAConnectionThatLeftItsLastRoomIsAsOneThatNeverJoined(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	alice.Handle([]byte(`{"type":"leave","room":"public"}`))
	queued(t, bob)
	alice.Handle([]byte(`{"type":"chat","room":"public","text":"x"}`))
	alice.Handle([]byte(`{"type":"leave"}`))
	expectNothing(t, bob, "a chat and a leave from a connection in no room")
	if h.Stats.Malformed.Load() != 2 || h.Stats.ChatIn.Load() != 0 {
		t.Fatalf("malformed %d, chat_in %d; want 2 and 0", h.Stats.Malformed.Load(), h.Stats.ChatIn.Load())
	}
	alice.Handle([]byte(`{"type":"join","room":"public","user":"alice-again"}`))
	if got := queued(t, bob); len(got) != 1 || got[0]["type"] != "join" || got[0]["user"] != "alice" || got[0]["online"] != 2.0 {
		t.Errorf("bob got %v, want alice's join under her first name with online 2", got)
	}
}

func TestAJoinToASeventeenthRoomIsMalformed(t *testing.T) {
	h := NewHub(NewStats("test"))
	alice := testMember(h, "alice")
	for i := range MaxRooms {
		joinRoom(t, alice, "room-"+strconv.Itoa(i))
	}
	alice.Handle([]byte(`{"type":"join","room":"one-too-many","user":"alice"}`))
	expectNothing(t, alice, "a join to a 17th room")
	if h.Stats.Joins.Load() != MaxRooms || h.Stats.Malformed.Load() != 1 || h.rooms["one-too-many"] != nil {
		t.Fatalf("joins %d, malformed %d; want %d and 1, and no room made", h.Stats.Joins.Load(), h.Stats.Malformed.Load(), MaxRooms)
	}
	alice.Handle([]byte(`{"type":"leave","room":"room-3"}`))
	joinRoom(t, alice, "one-too-many")
	if len(alice.rooms) != MaxRooms || h.Stats.Joins.Load() != MaxRooms+1 {
		t.Fatalf("after leaving one room, in %d rooms, joins %d", len(alice.rooms), h.Stats.Joins.Load())
	}
}

func TestLeaveWithoutRoomLeavesEveryRoomAndCloses(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob", "carol")
	alice, bob, carol := m[0], m[1], m[2]
	joinRoom(t, alice, "lobby", m...)
	joinRoom(t, carol, "lobby", m...)
	alice.Handle([]byte(`{"type":"leave"}`))
	expectLeave(t, bob, "alice", 2)
	got := queued(t, carol)
	online := map[any]any{}
	for _, g := range got {
		online[g["room"]] = g["online"]
	}
	if len(got) != 2 || online["public"] != 2.0 || online["lobby"] != 1.0 {
		t.Errorf("carol got %v, want alice's leave of public (online 2) and of lobby (online 1)", got)
	}
	expectClosing(t, alice, 1000)
	alice.Handle([]byte(`{"type":"join","room":"public","user":"alice"}`))
	expectNothing(t, bob, "a join from a connection closing after its leave")
}

func TestDisconnectIsAnnouncedInEveryRoomOfTheConnection(t *testing.T) {
	h := NewHub(NewStats("test"))
	m := members(t, h, "alice", "bob")
	alice, bob := m[0], m[1]
	joinRoom(t, alice, "lobby", bob)
	joinRoom(t, bob, "lobby", alice)
	h.Unregister(alice)
	got := queued(t, bob)
	if len(got) != 2 || got[0]["type"] != "leave" || got[1]["type"] != "leave" || got[0]["room"] == got[1]["room"] {
		t.Errorf("bob got %v, want alice's leave of public and of lobby", got)
	}
}

func TestARoomWithNoMembersLeftIsForgotten(t *testing.T) {
	h := NewHub(NewStats("test"))
	alice := members(t, h, "alice")[0]
	for i := range 1000 {
		room := "room-" + strconv.Itoa(i)
		joinRoom(t, alice, room)
		alice.Handle([]byte(`{"type":"leave","room":"` + room + `"}`))
	}
	bob := members(t, h, "bob")[0]
	joinRoom(t, bob, "lobby")
	h.Unregister(bob)
	if len(h.rooms) != 1 || h.rooms["public"] == nil {
		t.Fatalf("the hub holds %d rooms, want public only", len(h.rooms))
	}
	alice.Handle([]byte(`{"type":"leave"}`))
	if len(h.rooms) != 0 {
		t.Fatalf("the hub holds %d rooms after every member left, want 0", len(h.rooms))
	}
}

func TestAWriterIsWokenOnceForAQueueThatWasEmptyAndAgainOnlyAfterItTookIt(t *testing.T) {
	h := NewHub(NewStats("test"))
	c := testMember(h, "")
	for range 3 {
		if !c.offer(&Outbound{Data: []byte("x")}) {
			t.Fatal("an offer to a short queue was refused")
		}
	}
	for i, want := range []bool{true, false} {
		select {
		case <-c.Ready():
			if !want {
				t.Fatal("a second wake-up for one empty-to-full change")
			}
		default:
			if want {
				t.Fatalf("no wake-up after %d offers", 3+i)
			}
		}
	}
	spare := c.Take(nil)
	if len(spare) != 3 {
		t.Fatalf("took %d, want 3", len(spare))
	}
	c.offer(&Outbound{Data: []byte("y")})
	select {
	case <-c.Ready():
	default:
		t.Fatal("no wake-up once the writer had emptied the queue")
	}
	if got := c.Take(spare); len(got) != 1 || string(got[0].Data) != "y" || spare[0] != nil {
		t.Fatalf("took %d messages; the spare slice was not cleared for reuse: %v", len(got), spare[0])
	}
}

func TestNoOfferIsLostWhileAWriterTakesConcurrently(t *testing.T) {
	h := NewHub(NewStats("test"))
	c := testMember(h, "")
	const offerers, each = 4, 5000
	taken := make(chan int)
	go func() {
		n := 0
		var batch []*Outbound
		for n < offerers*each {
			<-c.Ready()
			batch = c.Take(batch)
			n += len(batch)
		}
		taken <- n
	}()
	for range offerers {
		go func() {
			for i := 0; i < each; {
				if c.offer(&Outbound{}) {
					i++ // a full queue refuses; the writer is behind, so try again
				} else {
					time.Sleep(time.Microsecond)
				}
			}
		}()
	}
	select {
	case n := <-taken:
		if n != offerers*each {
			t.Fatalf("the writer took %d, want %d", n, offerers*each)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the writer waited for a wake-up that never came")
	}
}

func TestAMemberWithHooksCallsWakeInsteadOfReadyAndClosedOnce(t *testing.T) {
	h := NewHub(NewStats("test"))
	c := NewMember(h)
	wakes, closes := 0, 0
	c.SetHooks(func() { wakes++ }, func() { closes++ })
	h.Register(c)
	c.offer(&Outbound{})
	c.offer(&Outbound{})
	select {
	case <-c.Ready():
		t.Fatal("Ready fired for a member with hooks")
	default:
	}
	c.Take(nil)
	c.offer(&Outbound{})
	c.Close(1000)
	c.Close(1001)
	if wakes != 2 || closes != 1 || c.CloseCode() != 1000 {
		t.Fatalf("wakes %d (want 2), closes %d (want 1), code %d", wakes, closes, c.CloseCode())
	}
}
