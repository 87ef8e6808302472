// frame.go owns the one WebSocket frame the chat core builds itself: a
// broadcast's text frame, server to client, made once and written by every
// recipient's writer as it is, the way gobwas/ws's compiled frames are.
package chat

import "encoding/binary"

// Frame is a complete, unmasked, final text frame (RFC 6455, section 5.2):
// what a server sends for a text message, header and payload, ready for the
// socket. Hub.Prepare returns one when the server writes broadcasts itself.
type Frame []byte

// TextFrame frames payload as a server's text message.
func TextFrame(payload []byte) Frame {
	const finText = 0x81 // FIN, opcode 1 (text); a server never masks
	n := len(payload)
	var f []byte
	switch {
	case n < 126:
		f = make([]byte, 2, 2+n)
		f[1] = byte(n)
	case n <= 0xffff:
		f = make([]byte, 4, 4+n)
		f[1] = 126
		binary.BigEndian.PutUint16(f[2:], uint16(n))
	default:
		f = make([]byte, 10, 10+n)
		f[1] = 127
		binary.BigEndian.PutUint64(f[2:], uint64(n))
	}
	f[0] = finText
	return append(f, payload...)
}

// PrepareFrame is the servers' Hub.Prepare by default: every broadcast
// framed once, as a Frame that each recipient's writer sends whole to its
// socket, past the library.
func PrepareFrame(data []byte) any { return TextFrame(data) }
