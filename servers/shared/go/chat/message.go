// message.go owns reading one whole message under the protocol's size limit
// (docs/protocol.md, "Size limit") when permessage-deflate is on: gorilla's
// and fasthttp's SetReadLimit count a compressed message's bytes on the
// wire, so a 5,000-byte chat that deflates to 100 would pass it. ReadMessage
// applies the limit to the message as the member will read it.
package chat

import (
	"encoding/binary"
	"errors"
	"io"
	"time"
)

// closeMessage is RFC 6455's close opcode, as both libraries number it.
const closeMessage = 8

// closeTooBig is the close code for a message over the size limit.
const closeTooBig = 1009

// ErrMessageTooBig is ReadMessage's error for a message over its limit,
// after it has sent the close frame that says so.
var ErrMessageTooBig = errors.New("message over the size limit")

// MessageConn is what ReadMessage needs of a gorilla-style *websocket.Conn
// (gorilla/websocket and fasthttp/websocket alike).
type MessageConn interface {
	NextReader() (messageType int, r io.Reader, err error)
	WriteControl(messageType int, data []byte, deadline time.Time) error
}

// ReadMessage reads the next data message whole, as the libraries' own
// ReadMessage does, but refuses one of more than limit bytes once inflated:
// it sends close 1009 (within closeWait) and returns ErrMessageTooBig.
func ReadMessage(conn MessageConn, limit int64, closeWait time.Duration) (int, []byte, error) {
	messageType, r, err := conn.NextReader()
	if err != nil {
		return messageType, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return messageType, nil, err
	}
	if int64(len(data)) > limit {
		payload := binary.BigEndian.AppendUint16(nil, closeTooBig)
		_ = conn.WriteControl(closeMessage, payload, time.Now().Add(closeWait))
		return messageType, nil, ErrMessageTooBig
	}
	return messageType, data, nil
}
