package chat

import (
	"bytes"
	"testing"
)

func TestATextFrameHasTheHeaderRFC6455GivesEachPayloadLength(t *testing.T) {
	for _, c := range []struct {
		n      int
		header []byte
	}{
		{0, []byte{0x81, 0}},
		{125, []byte{0x81, 125}},
		{126, []byte{0x81, 126, 0, 126}},
		{65535, []byte{0x81, 126, 0xff, 0xff}},
		{65536, []byte{0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0}},
	} {
		payload := bytes.Repeat([]byte("p"), c.n)
		f := TextFrame(payload)
		if !bytes.Equal(f[:len(c.header)], c.header) || !bytes.Equal(f[len(c.header):], payload) {
			t.Errorf("%d bytes: header %x, want %x", c.n, f[:len(c.header)], c.header)
		}
	}
}
