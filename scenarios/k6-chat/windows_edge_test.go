package chat

// A window counts exactly what happened inside it: a reader's batch never
// straddles an edge, and each chat sent is counted at the moment it went out.

import (
	"testing"
	"time"
)

func TestAReadersBatchIsCutAtAWindowsEdgeAndCountedWhereItsChatsArrived(t *testing.T) {
	tot := newTotals()
	start := time.UnixMilli(1_700_000_000_000)
	tot.schedule(time.Second, []step{
		{clients: 1, from: start, to: start.Add(time.Second)},
		{clients: 1, from: start.Add(time.Second), to: start.Add(2 * time.Second)},
	})
	b := newReadBatch(newTally(tot))
	// Ten chats 50 ms apart from 0.75 s: five in the first step, five in the second.
	for i := range 10 {
		at := start.Add(750*time.Millisecond + time.Duration(i)*50*time.Millisecond)
		b.frameAt(at)
		b.msgs++
		b.chats++
	}
	b.flush()
	first, _ := tot.stepStats(0)
	second, _ := tot.stepStats(1)
	if first.ChatReceived != 5 || second.ChatReceived != 5 {
		t.Errorf("received %d and %d, want 5 and 5", first.ChatReceived, second.ChatReceived)
	}
}

func TestAChatSentIsCountedInTheWindowOfItsMomentNotOfTheDrain(t *testing.T) {
	tot := newTotals()
	start := time.UnixMilli(1_700_000_000_000)
	tot.schedule(time.Second, []step{
		{clients: 1, from: start, to: start.Add(time.Second)},
		{clients: 1, from: start.Add(time.Second), to: start.Add(2 * time.Second)},
	})
	tl := newTally(tot)
	tl.add(cChatSent, 1)
	tl.add(cChatsIntended, 1)
	tot.countAt(start.Add(900*time.Millisecond), cChatSent, cChatsIntended)
	// The drain comes later, in the second step: the chat stays in the first.
	tot.now = func() time.Time { return start.Add(1400 * time.Millisecond) }
	tl.drain()
	first, _ := tot.stepStats(0)
	second, _ := tot.stepStats(1)
	if first.ChatSent != 1 || second.ChatSent != 0 || first.ChatsIntended != 1 {
		t.Errorf("sent %d then %d (intended %d), want 1 then 0 (1)", first.ChatSent, second.ChatSent, first.ChatsIntended)
	}
	if r := tot.report(); r.Counters["chat_sent"] != 1 {
		t.Errorf("the totals still count it once: %d", r.Counters["chat_sent"])
	}
}
