// hub.go owns the room: every open connection, the members who joined, and the
// broadcasts. Each broadcast is serialized once and the same bytes go to every
// recipient's bounded queue; the hub never waits for a slow recipient.
package main

import "sync"

// outbound is one serialized message, shared by every queue it is put on.
type outbound struct {
	data []byte
	chat bool // counted in deliveries when written
}

type Hub struct {
	stats *Stats

	// mu guards the maps and closed. Joins and leaves take it exclusively so
	// that each member sees the online counts in one order; chats fan out
	// under the read lock, concurrently. Nothing under it touches a socket.
	mu      sync.RWMutex
	clients map[*Client]struct{} // every open connection, so shutdown reaches all
	members map[*Client]struct{} // the joined ones, who receive broadcasts
	closed  bool                 // set by shutdown; later connections are refused
}

func newHub(stats *Stats) *Hub {
	return &Hub{
		stats:   stats,
		clients: make(map[*Client]struct{}),
		members: make(map[*Client]struct{}),
	}
}

// register adds a new connection. It reports false once the server is
// shutting down, and the caller closes the connection.
func (h *Hub) register(c *Client) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.clients[c] = struct{}{}
	return true
}

// unregister forgets a connection. A member who did not leave is announced as
// leaving, whatever ended the connection.
func (h *Hub) unregister(c *Client) {
	h.leave(c)
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// join adds c, whose user is set, to the members and announces it to every
// member, c included: that copy is c's acknowledgement.
func (h *Hub) join(c *Client) {
	h.mu.Lock()
	h.members[c] = struct{}{}
	m := &outbound{data: encodeJoin(c.user, len(h.members))}
	dropped := h.fanOut(m, nil)
	h.mu.Unlock()
	h.stats.joins.Add(1)
	h.stats.droppedSlow.Add(dropped)
}

// leave removes c from the members and announces it to those who remain.
// It does nothing for a connection that is not a member.
func (h *Hub) leave(c *Client) {
	h.mu.Lock()
	if _, ok := h.members[c]; !ok {
		h.mu.Unlock()
		return
	}
	delete(h.members, c)
	m := &outbound{data: encodeLeave(c.user, len(h.members))}
	dropped := h.fanOut(m, nil)
	h.mu.Unlock()
	h.stats.droppedSlow.Add(dropped)
}

// chat sends from's chat to every other member.
func (h *Hub) chat(from *Client, text string, ts []byte) {
	m := &outbound{data: encodeChat(from.user, text, ts), chat: true}
	h.mu.RLock()
	dropped := h.fanOut(m, from)
	h.mu.RUnlock()
	h.stats.droppedSlow.Add(dropped)
}

// fanOut offers m to every member but skip, and returns how many queues were
// full. The caller holds mu and adds the count to the stats after releasing it.
func (h *Hub) fanOut(m *outbound, skip *Client) (dropped int64) {
	for c := range h.members {
		if c != skip && !c.offer(m) {
			dropped++
		}
	}
	return dropped
}

// shutdown refuses new connections and closes every open one with code.
func (h *Hub) shutdown(code int) {
	h.mu.Lock()
	h.closed = true
	open := make([]*Client, 0, len(h.clients))
	for c := range h.clients {
		open = append(open, c)
	}
	h.mu.Unlock()
	for _, c := range open {
		c.close(code)
	}
}
