package chat

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

// A room's clients joining at once (one session() call with clients: 50, as
// the capacity scenario runs a room) all chat, at the rate their schedule says.
func TestFiftyClientsJoiningAtOnceAllChat(t *testing.T) {
	srv := startServer(t)
	tl := newTally(newTotals())
	now := time.Now()
	var wg sync.WaitGroup
	for i := 1; i <= 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClient(context.Background(), clientOptions{
				url: srv.url(), user: "k6-1-" + strconv.Itoa(i), room: "public",
				chatsPerSecond: 1, rateChanges: []rateChange{{at: now.Add(2 * time.Second), chatsPerSecond: 2}},
				stopChatAt: now.Add(4 * time.Second), leaveAt: now.Add(5 * time.Second),
			}, tl)
		}()
	}
	wg.Wait()
	got := counts(tl)
	// 50 x (2 s x 1/s + 2 s x 2/s) = 300, give or take the random phases.
	if got["chat_sent"] < 200 || got["chat_sent"] > 400 {
		t.Errorf("chat_sent = %d, want about 300 (all: %v)", got["chat_sent"], got)
	}
}
