package chat

import (
	"net"
	"testing"
	"time"
)

// fakeSocket is a library's connection as the client's writer uses it:
// ready frames go to the socket under it, the rest through WritePrepared.
type fakeSocket struct {
	Socket
	net     net.Conn
	library [][]byte // what went through the library
}

func (s *fakeSocket) NetConn() net.Conn                { return s.net }
func (s *fakeSocket) SetWriteDeadline(time.Time) error { return nil }
func (s *fakeSocket) WritePrepared(_ any, d []byte) error {
	s.library = append(s.library, d)
	return nil
}

// discardConn takes every write, as a socket with room to spare.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error)      { return len(p), nil }
func (discardConn) SetWriteDeadline(time.Time) error { return nil }

func TestABatchOfReadyFramesLeavesInOneWriteAndCountsItsChats(t *testing.T) {
	raw := &countingConn{}
	socket := &fakeSocket{net: raw}
	hub := NewHub(NewStats("test"))
	config := DefaultClientConfig()
	c := NewClient(hub, socket, &BatchConn{Conn: raw}, &config)
	chat := &Outbound{Data: []byte("chat"), Chat: true, Prepared: PrepareFrame([]byte("chat"))}
	pong := &Outbound{Data: []byte("pong")}
	if err := c.writeBatch([]*Outbound{chat, pong, chat}); err != nil {
		t.Fatal(err)
	}
	if len(raw.writes) != 1 || string(raw.writes[0]) != "\x81\x04chat\x81\x04chat" {
		t.Fatalf("socket got %q, want both chats' frames in one write", raw.writes)
	}
	if len(socket.library) != 1 || string(socket.library[0]) != "pong" {
		t.Fatalf("library got %q, want the pong", socket.library)
	}
	if got := hub.Stats.Deliveries.Load(); got != 2 {
		t.Fatalf("deliveries %d, want 2", got)
	}
}

func TestWithoutBatchingEachFrameLeavesWithItsOwnWrite(t *testing.T) {
	raw := &countingConn{}
	hub := NewHub(NewStats("test"))
	config := DefaultClientConfig()
	config.NoWriteBatch = true
	batch := &BatchConn{Conn: raw}
	c := NewClient(hub, &fakeSocket{net: batch}, batch, &config)
	chat := &Outbound{Data: []byte("chat"), Chat: true, Prepared: PrepareFrame([]byte("chat"))}
	if err := c.writeBatch([]*Outbound{chat, chat}); err != nil {
		t.Fatal(err)
	}
	if len(raw.writes) != 2 {
		t.Fatalf("socket got %d writes, want 2", len(raw.writes))
	}
}

// BenchmarkWriteBatch16 is the writer's share of a batch of 16 ready chat
// frames, the size a paced writer takes in saturation, to a socket with
// room: the client's part of a delivery, without the syscall. It allocates
// nothing per batch or per frame.
//
//	go test -run '^$' -bench WriteBatch wscbench/chat
func BenchmarkWriteBatch16(b *testing.B) {
	hub := NewHub(NewStats("bench"))
	config := DefaultClientConfig()
	raw := discardConn{}
	c := NewClient(hub, &fakeSocket{net: raw}, &BatchConn{Conn: raw}, &config)
	frame := &Outbound{Data: []byte(`{"type":"chat"}`), Chat: true, Prepared: PrepareFrame([]byte(`{"type":"chat"}`))}
	queued := make([]*Outbound, 16)
	for i := range queued {
		queued[i] = frame
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.writeBatch(queued); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(queued)), "ns/frame")
}
