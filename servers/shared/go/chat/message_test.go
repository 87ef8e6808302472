package chat

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// fakeMessageConn hands out one message and records the control frames
// written; the rest of Socket, which ReadMessage does not use, is nil.
type fakeMessageConn struct {
	Socket
	binary   bool // a binary message, else text
	message  []byte
	controls [][]byte
}

func (c *fakeMessageConn) NextReader() (int, io.Reader, error) {
	if c.binary {
		return 2, bytes.NewReader(c.message), nil
	}
	return textMessage, bytes.NewReader(c.message), nil
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
	if _, data, err := ReadMessage(atLimit, 4096, true, time.Second); err != nil || len(data) != 4096 || len(atLimit.controls) != 0 {
		t.Fatalf("4096 bytes: %d bytes, %v, controls %q", len(data), err, atLimit.controls)
	}
	over := &fakeMessageConn{message: bytes.Repeat([]byte("x"), 4097)}
	_, _, err := ReadMessage(over, 4096, true, time.Second)
	if !errors.Is(err, ErrMessageTooBig) {
		t.Fatalf("4097 bytes: %v", err)
	}
	if len(over.controls) != 1 || !bytes.Equal(over.controls[0], []byte{0x03, 0xf1}) {
		t.Fatalf("want one close 1009, got %q", over.controls)
	}
}

func TestReadMessageFailsATextMessageThatIsNotUTF8With1007(t *testing.T) {
	invalid := []byte("caf\xc3") // a 2-byte sequence cut short at the end
	text := &fakeMessageConn{message: invalid}
	if _, _, err := ReadMessage(text, 4096, true, time.Second); !errors.Is(err, ErrInvalidUTF8) {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	if len(text.controls) != 1 || !bytes.Equal(text.controls[0], []byte{0x03, 0xef}) {
		t.Fatalf("want one close 1007, got %q", text.controls)
	}
	// Binary messages carry no text; the no-utf8-check variant checks nothing.
	for _, conn := range []*fakeMessageConn{{binary: true, message: invalid}, {message: invalid}} {
		check := conn.binary
		if _, data, err := ReadMessage(conn, 4096, check, time.Second); err != nil || !bytes.Equal(data, invalid) || len(conn.controls) != 0 {
			t.Fatalf("binary %v, check %v: %q, %v, controls %q", conn.binary, check, data, err, conn.controls)
		}
	}
}
