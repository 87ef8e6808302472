// hub.go owns the room: every open connection, the members who joined, and the
// broadcasts. Each broadcast is serialized once and the same bytes go to every
// recipient's bounded queue; the hub never waits for a slow recipient.
//
// A Member is one connection as the room sees it: its place in the room, its
// token bucket and its bounded queue. The server's client owns the socket: its
// reader hands each text frame to Member.Handle, and its writer drains
// Member.Ready and Member.Take, and closes the socket when Member.Closing fires.
package chat

import (
	"sync"
	"time"
)

// QueueSize is how many messages one member's queue holds before further
// ones are dropped for it.
const QueueSize = 256

// Close codes the room asks a connection to close with.
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

	// mu guards the maps and closed. Joins and leaves take it exclusively so
	// that each member sees the online counts in one order; chats fan out
	// under the read lock, concurrently. Nothing under it touches a socket.
	mu      sync.RWMutex
	clients map[*Member]struct{} // every open connection, so shutdown reaches all
	// members are the joined ones, who receive broadcasts: a slice, so that
	// a broadcast walks contiguous memory (a map walk was 3-4 % of the CPU in
	// saturation, by pprof; docs/fairness.md). Each member keeps its index.
	members []*Member
	closed  bool // set by shutdown; later connections are refused
}

func NewHub(stats *Stats) *Hub {
	return &Hub{
		Stats:   stats,
		clients: make(map[*Member]struct{}),
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

// Unregister forgets a connection. A member who did not leave is announced as
// leaving, whatever ended the connection.
func (h *Hub) Unregister(m *Member) {
	h.leave(m)
	h.mu.Lock()
	delete(h.clients, m)
	h.mu.Unlock()
}

// join adds m, whose user is set, to the members and announces it to every
// member, m included: that copy is m's acknowledgement.
func (h *Hub) join(m *Member) {
	h.mu.Lock()
	m.index = len(h.members)
	h.members = append(h.members, m)
	out := &Outbound{Data: encodeJoin(m.user, len(h.members))}
	dropped := h.fanOut(out, nil)
	h.mu.Unlock()
	h.Stats.Joins.Add(1)
	h.Stats.DroppedSlow.Add(dropped)
}

// leave removes m from the members and announces it to those who remain.
// It does nothing for a connection that is not a member.
func (h *Hub) leave(m *Member) {
	h.mu.Lock()
	if m.index < 0 {
		h.mu.Unlock()
		return
	}
	h.removeMember(m)
	out := &Outbound{Data: encodeLeave(m.user, len(h.members))}
	dropped := h.fanOut(out, nil)
	h.mu.Unlock()
	h.Stats.DroppedSlow.Add(dropped)
}

// chat sends from's chat to every other member.
func (h *Hub) chat(from *Member, text string, ts []byte) {
	out := &Outbound{Data: encodeChat(from.user, text, ts), Chat: true}
	skip := from
	if h.EchoChatToSender {
		skip = nil
	}
	h.mu.RLock()
	dropped := h.fanOut(out, skip)
	h.mu.RUnlock()
	h.Stats.DroppedSlow.Add(dropped)
}

// fanOut offers out to every member but skip, and returns how many queues
// were full. The caller holds mu and adds the count to the stats after
// releasing it.
func (h *Hub) fanOut(out *Outbound, skip *Member) (dropped int64) {
	if h.Prepare != nil {
		out.Prepared = h.Prepare(out.Data)
	}
	for _, m := range h.members {
		if m != skip && !m.offer(out) {
			dropped++
		}
	}
	return dropped
}

// removeMember takes m out of the members by moving the last one into its
// place. The caller holds mu exclusively.
func (h *Hub) removeMember(m *Member) {
	last := len(h.members) - 1
	moved := h.members[last]
	h.members[m.index] = moved
	moved.index = m.index
	h.members[last] = nil
	h.members = h.members[:last]
	m.index = -1
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

// memberState is where a connection stands in the room.
type memberState int

const (
	stateFresh  memberState = iota // connected, not joined
	stateJoined                    // a member: receives broadcasts
	stateLeft                      // sent leave; its connection is closing
)

// Member is one connection's side of the room. Handle is called by the
// connection's reader only; the hub and Handle offer to the queue, and the
// connection's writer is its only consumer (Ready, then Take).
type Member struct {
	hub *Hub

	// index is m's place in hub.members, -1 while it is not a member;
	// guarded by the hub's mu.
	index int

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

	// Owned by the reader (through Handle); the hub reads user during join
	// and leave, which Handle calls.
	state   memberState
	user    string
	limiter *limiter
}

// NewMember makes the room's side of a new connection; Register adds it.
func NewMember(hub *Hub) *Member {
	return &Member{
		hub:     hub,
		index:   -1,
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
		// A second join is ignored, as is one on a connection that left.
		if m.state == stateFresh {
			m.user = msg.user
			m.state = stateJoined
			m.hub.join(m)
		}
	case kindChat:
		if m.state != stateJoined {
			stats.Malformed.Add(1)
			return
		}
		stats.ChatIn.Add(1)
		if !m.limiter.allow() {
			stats.DroppedRatelimit.Add(1)
			return
		}
		stats.ChatAccepted.Add(1)
		m.hub.chat(m, msg.text, msg.ts)
	case kindLeave:
		if m.state != stateJoined {
			stats.Malformed.Add(1)
			return
		}
		m.state = stateLeft
		m.hub.leave(m)
		m.Close(CloseNormal)
	}
}
