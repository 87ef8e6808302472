package chat

// Clients in rooms, as fanout and capacity run them, against a minimal
// rooms-aware hub in the test (the Go servers of this tree serve "public"
// only): each room's chats reach its own members, and no one else.

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// roomsHub keeps the members of each room; it echoes a join to the room,
// relays a chat to the room's other members, counts a chat from a
// non-member as misrouted, and closes with 1000 on leave.
type roomsHub struct {
	mu        sync.Mutex
	rooms     map[string]map[*websocket.Conn]*sync.Mutex
	misrouted atomic.Int64
}

func (h *roomsHub) send(room string, except *websocket.Conn, msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c, l := range h.rooms[room] {
		if c != except {
			l.Lock()
			_ = c.WriteMessage(websocket.TextMessage, msg)
			l.Unlock()
		}
	}
}

func (h *roomsHub) serve(c *websocket.Conn) {
	lock := &sync.Mutex{}
	var joined string
	defer func() {
		h.mu.Lock()
		delete(h.rooms[joined], c)
		h.mu.Unlock()
	}()
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		var m struct{ Type, Room, User string }
		_ = json.Unmarshal(msg, &m)
		switch m.Type {
		case "join":
			h.mu.Lock()
			if h.rooms[m.Room] == nil {
				h.rooms[m.Room] = map[*websocket.Conn]*sync.Mutex{}
			}
			h.rooms[m.Room][c] = lock
			joined = m.Room
			h.mu.Unlock()
			echo, _ := json.Marshal(map[string]any{"type": "join", "room": m.Room, "user": m.User, "online": 1})
			h.send(m.Room, nil, echo)
		case "chat":
			if m.Room != joined {
				h.misrouted.Add(1)
				continue
			}
			h.send(m.Room, c, msg)
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

func TestClientsInRoomsReceiveTheirOwnRoomsChatsOnly(t *testing.T) {
	hub := &roomsHub{rooms: map[string]map[*websocket.Conn]*sync.Mutex{}}
	url := fakeServer(t, hub.serve)
	const size = 3
	now := time.Now()
	stop, leave := now.Add(800*time.Millisecond), now.Add(1300*time.Millisecond)
	tallies := map[string]*tally{"room-1": newTally(newTotals()), "room-2": newTally(newTotals())}
	rates := map[string]float64{"room-1": 10, "room-2": 4}
	var wg sync.WaitGroup
	for room, tl := range tallies {
		for i := range size {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runClient(context.Background(), clientOptions{
					url: url, user: room + "-k6-" + string(rune('a'+i)), room: room,
					chatsPerSecond: rates[room], stopChatAt: stop, leaveAt: leave,
				}, tl)
			}()
		}
	}
	wg.Wait()
	if n := hub.misrouted.Load(); n != 0 {
		t.Errorf("%d chats named a room their sender was not in", n)
	}
	for room, tl := range tallies {
		c := counts(tl)
		wantCounts(t, c, map[string]int64{"sessions": size, "sessions_closed": size, "abnormal_closes": 0, "malformed": 0})
		// Each chat reaches the room's other members, and nobody else: a
		// chat sent before every member joined reaches fewer.
		if all := c["chat_sent"] * (size - 1); c["chat_sent"] == 0 || c["chat_received"] > all || c["chat_received"] < all-size*(size-1) {
			t.Errorf("%s: %d chats sent, %d received, want about %d", room, c["chat_sent"], c["chat_received"], all)
		}
	}
	// The rooms chat at different rates, so a leak from one to the other shows.
	if a, b := counts(tallies["room-1"])["chat_sent"], counts(tallies["room-2"])["chat_sent"]; a <= b {
		t.Errorf("room-1 sent %d chats, room-2 %d: want room-1 (10/s) ahead of room-2 (4/s)", a, b)
	}
}
