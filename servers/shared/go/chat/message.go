// message.go owns reading one whole message as docs/protocol.md asks:
//   - under the size limit ("Size limit") when permessage-deflate is on:
//     gorilla's and fasthttp's SetReadLimit count a compressed message's bytes
//     on the wire, so a 5,000-byte chat that deflates to 100 would pass it.
//     ReadMessage applies the limit to the message as the member will read it.
//   - valid UTF-8 when it is text ("WebSocket conformance"): neither library
//     checks it, and RFC 6455 (section 8.1) says the endpoint MUST fail the
//     connection. ReadMessage checks where the message is read, as gorilla's
//     own Autobahn example (examples/autobahn/server.go) does.
package chat

import (
	"encoding/binary"
	"errors"
	"io"
	"time"
	"unicode/utf8"
)

// textMessage and closeMessage are RFC 6455's opcodes, as both libraries number them.
const (
	textMessage  = 1
	closeMessage = 8
)

// The close codes ReadMessage sends.
const (
	closeInvalidPayload = 1007 // a text message that is not UTF-8
	closeTooBig         = 1009 // a message over the size limit
)

// ErrMessageTooBig is ReadMessage's error for a message over its limit,
// after it has sent the close frame that says so.
var ErrMessageTooBig = errors.New("message over the size limit")

// ErrInvalidUTF8 is ReadMessage's error for a text message that is not
// UTF-8, after it has sent close 1007.
var ErrInvalidUTF8 = errors.New("text message is not UTF-8")

// ReadMessage reads the next data message whole, as the libraries' own
// ReadMessage does, but refuses one of more than limit bytes once inflated
// (close 1009, ErrMessageTooBig) and, when checkUTF8 is set, a text message
// that is not UTF-8 (close 1007, ErrInvalidUTF8). Each close is sent within
// closeWait. checkUTF8 is off only in the no-utf8-check variant, which
// measures what the check costs.
func ReadMessage(conn Socket, limit int64, checkUTF8 bool, closeWait time.Duration) (int, []byte, error) {
	messageType, r, err := conn.NextReader()
	if err != nil {
		return messageType, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return messageType, nil, err
	}
	if int64(len(data)) > limit {
		failWith(conn, closeTooBig, closeWait)
		return messageType, nil, ErrMessageTooBig
	}
	if checkUTF8 && messageType == textMessage && !utf8.Valid(data) {
		failWith(conn, closeInvalidPayload, closeWait)
		return messageType, nil, ErrInvalidUTF8
	}
	return messageType, data, nil
}

// failWith sends the close frame that fails the connection with code.
func failWith(conn Socket, code uint16, closeWait time.Duration) {
	payload := binary.BigEndian.AppendUint16(nil, code)
	_ = conn.WriteControl(closeMessage, payload, time.Now().Add(closeWait))
}
