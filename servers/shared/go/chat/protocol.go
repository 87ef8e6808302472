// protocol.go owns the wire format of docs/protocol.md: the messages a client
// may send, how they are validated, and the broadcasts the hub serializes once.
package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxMessageSize is the largest message a client may send, in bytes
// (docs/protocol.md, "Size limit"); a larger one closes the connection with
// 1009. Both Go servers read with it.
const MaxMessageSize = 4096

// maxNameRunes bounds a user or room name, counted in Unicode scalar values.
const maxNameRunes = 64

// kind is the type of a valid client message.
type kind int

const (
	kindJoin kind = iota + 1
	kindChat
	kindPing
	kindLeave
)

// inbound is one client message that passed validation.
type inbound struct {
	kind kind
	// room is the room a join or chat names, or the one a leave names;
	// empty for a leave of every room (an empty room is invalid).
	room string
	user string // join only
	text string // chat only
	// ts is the number's text exactly as received, so it echoes unchanged;
	// nil when the message had no ts.
	ts json.RawMessage
}

// wireIn mirrors a client message. Pointers tell an absent field from an empty
// one; ts stays raw so that its type can be checked and its text kept.
type wireIn struct {
	Type *string         `json:"type"`
	Room *string         `json:"room"`
	User *string         `json:"user"`
	Text *string         `json:"text"`
	TS   json.RawMessage `json:"ts"`
}

var (
	errNoType    = errors.New("missing type")
	errRoom      = errors.New("room is not a string of 1 to 64 characters")
	errUser      = errors.New("user is not a string of 1 to 64 characters")
	errText      = errors.New("text is not a string")
	errTimestamp = errors.New("ts is not a number")
)

// parseInbound validates one text frame. Any error means the frame is invalid
// input: ignored and counted in malformed. Whether the sender has joined is the
// client's business, not the parser's.
func parseInbound(data []byte) (inbound, error) {
	var w wireIn
	// Malformed JSON, a non-object, or a field of the wrong type all fail here.
	if err := json.Unmarshal(data, &w); err != nil {
		return inbound{}, err
	}
	if w.Type == nil {
		return inbound{}, errNoType
	}
	// JSON null lands in a RawMessage as the text "null"; only a number is a ts.
	if w.TS != nil && !isNumber(w.TS) {
		return inbound{}, errTimestamp
	}
	switch *w.Type {
	case "join":
		if w.Room == nil || !validName(*w.Room) {
			return inbound{}, errRoom
		}
		if w.User == nil || !validName(*w.User) {
			return inbound{}, errUser
		}
		return inbound{kind: kindJoin, room: *w.Room, user: *w.User}, nil
	case "chat":
		if w.Room == nil || !validName(*w.Room) {
			return inbound{}, errRoom
		}
		if w.Text == nil {
			return inbound{}, errText
		}
		return inbound{kind: kindChat, room: *w.Room, text: *w.Text, ts: w.TS}, nil
	case "ping":
		return inbound{kind: kindPing, ts: w.TS}, nil
	case "leave":
		// Without room it leaves every room; with one, that room only.
		if w.Room != nil && !validName(*w.Room) {
			return inbound{}, errRoom
		}
		msg := inbound{kind: kindLeave}
		if w.Room != nil {
			msg.room = *w.Room
		}
		return msg, nil
	default:
		return inbound{}, fmt.Errorf("unknown type %q", *w.Type)
	}
}

// validName reports whether s is a valid user or room name: 1 to 64
// Unicode scalar values.
func validName(s string) bool {
	return s != "" && utf8.RuneCountInString(s) <= maxNameRunes
}

// isNumber reports whether raw, already checked to be one valid JSON value,
// is a number: only numbers start with a digit or a minus sign.
func isNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}

// Broadcasts, in the field order docs/protocol.md shows.
type (
	presenceOut struct {
		Type   string `json:"type"`
		Room   string `json:"room"`
		User   string `json:"user"`
		Online int    `json:"online"`
	}
	chatOut struct {
		Type string          `json:"type"`
		Room string          `json:"room"`
		User string          `json:"user"`
		Text string          `json:"text"`
		TS   json.RawMessage `json:"ts,omitempty"`
	}
	pongOut struct {
		Type string          `json:"type"`
		TS   json.RawMessage `json:"ts,omitempty"`
	}
)

func encodeJoin(room, user string, online int) []byte {
	return encode(presenceOut{Type: "join", Room: room, User: user, Online: online})
}

func encodeLeave(room, user string, online int) []byte {
	return encode(presenceOut{Type: "leave", Room: room, User: user, Online: online})
}

func encodeChat(room, user, text string, ts json.RawMessage) []byte {
	return encode(chatOut{Type: "chat", Room: room, User: user, Text: text, TS: ts})
}

func encodePong(ts json.RawMessage) []byte {
	return encode(pongOut{Type: "pong", TS: ts})
}

// encode serializes a broadcast. HTML escaping is off so text goes out as it
// came in (json.Marshal would turn "<" into "\u003c").
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only a ts that is not valid JSON could fail, and parseInbound rejects those.
		panic(fmt.Sprintf("encode %T: %v", v, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
