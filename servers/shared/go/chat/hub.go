// hub.go owns the rooms: every open connection, each room's members, and the
// broadcasts. Each broadcast is serialized once and the same bytes go to every
// recipient's bounded queue in its room; the hub never waits for a slow
// recipient, and a broadcast walks its own room's members only.
//
// A Member is one connection as the hub sees it: the rooms it is in (its
// place in each), its token bucket and its bounded queue. The server's client
// owns the socket: its reader hands each text frame to Member.Handle, and its
// writer drains Member.Ready and Member.Take, and closes the socket when
// Member.Closing fires.
package chat

import (
	"sync"
	"time"
)

// QueueSize is how many messages one member's queue holds before further
// ones are dropped for it.
const QueueSize = 256

// MaxRooms is how many rooms one connection may be in at once.
const MaxRooms = 16

// Close codes the hub asks a connection to close with.
const (
	CloseNormal    = 1000 // after a leave
	CloseGoingAway = 1001 // on shutdown
)

// Outbound is one serialized message, shared by every queue it is put on.
type Outbound struct {
	Data []byte
	Chat bool // counted in deliveries when written

	// Prepared is what Hub.Prepare made of Data for a broadcast, or nil.
	Prepared any
}

// room is one room's members: a slice, so that a broadcast walks contiguous
// memory (a map walk was 3-4 % of the CPU in saturation, by pprof;
// docs/fairness.md). Each member keeps its index in every room it is in
// (membership). Guarded by the hub's mu.
type room struct {
	name    string
	members []*Member
}

// membership is one room a member is in, and the member's index in that
// room's members. Guarded by the hub's mu: another member's leave moves it.
type membership struct {
	room  *room
	index int
}

type Hub struct {
	Stats *Stats

	// EchoChatToSender also delivers each chat to its sender, against
	// docs/protocol.md. Only profile-b/go's fault_echo test build sets it,
	// so that the verifier's tests can prove they catch a broken server.
	EchoChatToSender bool

	// Prepare, if set, turns a broadcast's bytes into the WebSocket library's
	// ready-to-send form once, for every recipient's writer to share
	// (gorilla's and fasthttp/websocket's PreparedMessage: the frame is
	// built once, and writing it takes no write buffer).
	Prepare func(data []byte) any

	// mu guards clients, rooms, every room's members, every member's
	// memberships, and closed. Joins and leaves take it exclusively so that
	// each member of a room sees its online counts in one order; chats fan
	// out under the read lock, concurrently. Nothing under it touches a
	// socket or a counter.
	mu      sync.RWMutex
	clients map[*Member]struct{} // every open connection, so shutdown reaches all
	// rooms holds the rooms with at least one member: a room is made by its
	// first join and forgotten with its last leave, so the hub's memory
	// follows the rooms in use, not every name ever joined.
	rooms  map[string]*room
	closed bool // set by shutdown; later connections are refused
}

func NewHub(stats *Stats) *Hub {
	return &Hub{
		Stats:   stats,
		clients: make(map[*Member]struct{}),
		rooms:   make(map[string]*room),
	}
}

// Register adds a new connection. It reports false once the server is
// shutting down, and the caller closes the connection.
func (h *Hub) Register(m *Member) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.clients[m] = struct{}{}
	return true
}

// Unregister forgets a connection. It is announced as leaving every room it
// is still in, whatever ended the connection, and joins nothing afterwards.
func (h *Hub) Unregister(m *Member) {
	h.mu.Lock()
	dropped := h.leaveAll(m)
	m.gone = true
	delete(h.clients, m)
	h.mu.Unlock()
	h.Stats.DroppedSlow.Add(dropped)
}

// joinResult is what a join came to, for the stats.
type joinResult int

const (
	joinDone    joinResult = iota // joined and announced
	joinIgnored                   // already in the room, or the connection is going
	joinTooMany                   // a room beyond MaxRooms: malformed
)

// join adds m to the room named name and announces it to every member of
// that room, m included: that copy is m's acknowledgement. m's first join
// sets its user name, which every later join announces.
func (h *Hub) join(m *Member, name, user string) joinResult {
	h.mu.Lock()
	if m.gone || m.in(name) >= 0 {
		h.mu.Unlock()
		return joinIgnored
	}
	if len(m.rooms) == MaxRooms {
		h.mu.Unlock()
		return joinTooMany
	}
	if m.user == "" {
		m.user = user
	}
	r := h.rooms[name]
	if r == nil {
		r = &room{name: name}
		h.rooms[name] = r
	}
	m.rooms = append(m.rooms, membership{room: r, index: len(r.members)})
	r.members = append(r.members, m)
	out := &Outbound{Data: encodeJoin(r.name, m.user, len(r.members))}
	dropped := h.fanOut(r, out, nil)
	h.mu.Unlock()
	h.Stats.Joins.Add(1)
	h.Stats.DroppedSlow.Add(dropped)
	return joinDone
}

// leave takes m out of the room named name and announces it to those who
// remain. It reports false, doing nothing, when m is not in that room.
func (h *Hub) leave(m *Member, name string) bool {
	h.mu.Lock()
	i := m.in(name)
	if i < 0 {
		h.mu.Unlock()
		return false
	}
	dropped := h.leaveRoom(m, i)
	h.mu.Unlock()
	h.Stats.DroppedSlow.Add(dropped)
	return true
}

// leaveEvery takes m out of every room it is in, announcing it in each, and
// marks it gone: the connection is closing, and joins nothing more. It
// reports false, doing nothing, when m is in no room.
func (h *Hub) leaveEvery(m *Member) bool {
	h.mu.Lock()
	if len(m.rooms) == 0 {
		h.mu.Unlock()
		return false
	}
	dropped := h.leaveAll(m)
	m.gone = true
	h.mu.Unlock()
	h.Stats.DroppedSlow.Add(dropped)
	return true
}

// leaveAll takes m out of every room it is in. The caller holds mu
// exclusively and adds the dropped count to the stats after releasing it.
func (h *Hub) leaveAll(m *Member) (dropped int64) {
	for len(m.rooms) > 0 {
		dropped += h.leaveRoom(m, len(m.rooms)-1)
	}
	return dropped
}

// leaveRoom takes m out of its i-th room, announces it to the room's
// remaining members, and forgets the room if none remain. The caller holds
// mu exclusively.
func (h *Hub) leaveRoom(m *Member, i int) (dropped int64) {
	r := m.rooms[i].room
	r.remove(m.rooms[i].index)
	last := len(m.rooms) - 1
	m.rooms[i] = m.rooms[last]
	m.rooms[last] = membership{}
	m.rooms = m.rooms[:last]
	if len(r.members) == 0 {
		delete(h.rooms, r.name)
		return 0
	}
	out := &Outbound{Data: encodeLeave(r.name, m.user, len(r.members))}
	return h.fanOut(r, out, nil)
}

// roomOf returns the room named name if m is in it, else nil.
func (h *Hub) roomOf(m *Member, name string) *room {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if i := m.in(name); i >= 0 {
		return m.rooms[i].room
	}
	return nil
}

// chat sends from's chat to every other member of r.
func (h *Hub) chat(from *Member, r *room, text string, ts []byte) {
	out := &Outbound{Data: encodeChat(r.name, from.user, text, ts), Chat: true}
	skip := from
	if h.EchoChatToSender {
		skip = nil
	}
	h.mu.RLock()
	dropped := h.fanOut(r, out, skip)
	h.mu.RUnlock()
	h.Stats.DroppedSlow.Add(dropped)
}

// fanOut offers out to every member of r but skip, and returns how many
// queues were full. The caller holds mu and adds the count to the stats after
// releasing it.
func (h *Hub) fanOut(r *room, out *Outbound, skip *Member) (dropped int64) {
	if h.Prepare != nil {
		out.Prepared = h.Prepare(out.Data)
	}
	for _, m := range r.members {
		if m != skip && !m.offer(out) {
			dropped++
		}
	}
	return dropped
}

// remove takes the member at index i out of r by moving the last one into
// its place, and updates the moved member's index. The caller holds the
// hub's mu exclusively.
func (r *room) remove(i int) {
	last := len(r.members) - 1
	moved := r.members[last]
	r.members[i] = moved
	moved.rooms[moved.in(r.name)].index = i
	r.members[last] = nil
	r.members = r.members[:last]
}

// Shutdown refuses new connections and asks every open one to close with code.
func (h *Hub) Shutdown(code int) {
	h.mu.Lock()
	h.closed = true
	open := make([]*Member, 0, len(h.clients))
	for m := range h.clients {
		open = append(open, m)
	}
	h.mu.Unlock()
	for _, m := range open {
		m.Close(code)
	}
}

// Member is one connection's side of the hub. Handle is called by the
// connection's reader only; the hub and Handle offer to the queue, and the
// connection's writer is its only consumer (Ready, then Take).
type Member struct {
	hub *Hub

	// rooms are the rooms m is in, at most MaxRooms, in no particular order
	// (a linear search of at most 16 is as fast as a map, and allocates
	// less); user is its name, set by its first join; gone is set once it
	// has left every room with a leave or ended, after which it joins
	// nothing. All three are guarded by the hub's mu, except that the
	// reader reads user without it: only the reader's own join writes it.
	rooms []membership
	user  string
	gone  bool

	// queue is the bounded queue of outbound messages, guarded by queueMu:
	// the hub and the reader append to it without blocking, the writer takes
	// all of it at once (Take). ready holds one wake-up for the writer, sent
	// when the queue goes from empty to not: a broadcast costs each recipient
	// a short lock and an append, not a channel send, and a batch costs its
	// writer one lock, not a channel receive per message (docs/fairness.md).
	queueMu sync.Mutex
	queue   []*Outbound
	ready   chan struct{}

	// wake, if set, is called instead of signalling ready, for a server
	// whose connections have no writer goroutine to wake (SetHooks).
	wake func()
	// closed, if set, is called once Close has closed closing (SetHooks).
	closed func()

	// Close(code) closes closing once; the writer then sends a close frame
	// with closeCode and ends the connection.
	closeOnce sync.Once
	closeCode int
	closing   chan struct{}

	// limiter is owned by the reader (through Handle).
	limiter *limiter
}

// in returns the index in m.rooms of the room named name, or -1. The caller
// holds the hub's mu.
func (m *Member) in(name string) int {
	for i := range m.rooms {
		if m.rooms[i].room.name == name {
			return i
		}
	}
	return -1
}

// NewMember makes the hub's side of a new connection; Register adds it.
func NewMember(hub *Hub) *Member {
	return &Member{
		hub:     hub,
		ready:   make(chan struct{}, 1),
		closing: make(chan struct{}),
		limiter: newLimiter(time.Now),
	}
}

// Ready receives once the queue holds something after it was empty; the
// connection's writer then takes it all with Take.
func (m *Member) Ready() <-chan struct{} { return m.ready }

// Take returns everything queued, oldest first, and leaves spare (emptied,
// for the queue to reuse) as the new, empty queue: the writer hands back the
// slice it took last time, so a busy connection's two slices take turns and
// a batch allocates nothing.
func (m *Member) Take(spare []*Outbound) []*Outbound {
	clear(spare)
	m.queueMu.Lock()
	got := m.queue
	m.queue = spare[:0]
	m.queueMu.Unlock()
	return got
}

// Closing is closed once the connection is asked to close.
func (m *Member) Closing() <-chan struct{} { return m.closing }

// CloseCode is the code to close with; read it after Closing is closed.
func (m *Member) CloseCode() int { return m.closeCode }

// offer queues out without blocking and reports false when the queue is
// full, in which case out is dropped for this connection.
func (m *Member) offer(out *Outbound) bool {
	m.queueMu.Lock()
	n := len(m.queue)
	if n >= QueueSize {
		m.queueMu.Unlock()
		return false
	}
	m.queue = append(m.queue, out)
	m.queueMu.Unlock()
	if n == 0 {
		if m.wake != nil {
			m.wake()
			return true
		}
		select {
		case m.ready <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	return true
}

// Close asks the writer to close the connection with code. Only the first
// call counts.
func (m *Member) Close(code int) {
	m.closeOnce.Do(func() {
		m.closeCode = code
		close(m.closing)
		if m.closed != nil {
			m.closed()
		}
	})
}

// SetHooks is for a server whose connections have no writer goroutine (an
// event loop): wake is called, instead of Ready receiving, when the queue
// gets a message after it was empty, and closed once the connection is asked
// to close. Both may be called with the hub's lock held, from any goroutine:
// they must only schedule work, never write to a socket. Set them before
// Register.
func (m *Member) SetHooks(wake, closed func()) {
	m.wake, m.closed = wake, closed
}

// Handle applies one text frame from the peer, on a short-lived goroutine
// that it waits for. Decoding with encoding/json and encoding a broadcast
// take about 2 KiB more stack than a connection's reader needs otherwise; on
// the reader they would double its stack to 8 KiB for the connection's life
// (Go shrinks only a stack that is less than a quarter used), where the
// short-lived goroutine grows and goes (docs/fairness.md, "Idle memory per
// client"). It costs about 3 µs per inbound frame, against the deliveries a
// chat fans out to. The caller sees no difference: Handle returns once the
// frame is applied, so frames are applied in order, one at a time, and the
// member's state stays its reader's.
func (m *Member) Handle(data []byte) {
	done := make(chan struct{})
	go func() {
		m.handle(data)
		close(done)
	}()
	<-done
}

// handle is Handle's work.
func (m *Member) handle(data []byte) {
	stats := m.hub.Stats
	msg, err := parseInbound(data)
	if err != nil {
		stats.Malformed.Add(1)
		return
	}
	switch msg.kind {
	case kindPing:
		if !m.offer(&Outbound{Data: encodePong(msg.ts)}) {
			stats.DroppedSlow.Add(1)
		}
	case kindJoin:
		// A join to a room m is in is ignored, as is one on a connection
		// that left every room with a leave and is closing.
		if m.hub.join(m, msg.room, msg.user) == joinTooMany {
			stats.Malformed.Add(1)
		}
	case kindChat:
		r := m.hub.roomOf(m, msg.room)
		if r == nil {
			stats.Malformed.Add(1)
			return
		}
		stats.ChatIn.Add(1)
		if !m.limiter.allow() {
			stats.DroppedRatelimit.Add(1)
			return
		}
		stats.ChatAccepted.Add(1)
		m.hub.chat(m, r, msg.text, msg.ts)
	case kindLeave:
		if msg.room != "" {
			// One room: the connection stays open, in its other rooms.
			if !m.hub.leave(m, msg.room) {
				stats.Malformed.Add(1)
			}
			return
		}
		if !m.hub.leaveEvery(m) {
			stats.Malformed.Add(1)
			return
		}
		m.Close(CloseNormal)
	}
}
