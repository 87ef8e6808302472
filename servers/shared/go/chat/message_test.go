package chat

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// fakeMessageConn hands out one message and records the control frames written.
type fakeMessageConn struct {
	message  []byte
	controls [][]byte
}

func (c *fakeMessageConn) NextReader() (int, io.Reader, error) {
	return 1, bytes.NewReader(c.message), nil
}

func (c *fakeMessageConn) WriteControl(messageType int, data []byte, _ time.Time) error {
	if messageType != closeMessage {
		return errors.New("not a close")
	}
	c.controls = append(c.controls, data)
	return nil
}

func TestReadMessagePassesAMessageAtTheLimitAndClosesOnePast(t *testing.T) {
	atLimit := &fakeMessageConn{message: bytes.Repeat([]byte("x"), 4096)}
	if _, data, err := ReadMessage(atLimit, 4096, time.Second); err != nil || len(data) != 4096 || len(atLimit.controls) != 0 {
		t.Fatalf("4096 bytes: %d bytes, %v, controls %q", len(data), err, atLimit.controls)
	}
	over := &fakeMessageConn{message: bytes.Repeat([]byte("x"), 4097)}
	_, _, err := ReadMessage(over, 4096, time.Second)
	if !errors.Is(err, ErrMessageTooBig) {
		t.Fatalf("4097 bytes: %v", err)
	}
	if len(over.controls) != 1 || !bytes.Equal(over.controls[0], []byte{0x03, 0xf1}) {
		t.Fatalf("want one close 1009, got %q", over.controls)
	}
}
