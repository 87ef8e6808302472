// protocol.js owns the wire format of docs/protocol.md: the messages a client may send,
// how they are validated, and the broadcasts the hub serializes once.
'use strict';

const MAX_NAME_CHARS = 64; // a room or a user name: 1 to 64 Unicode scalar values

// The number of Unicode scalar values in s (a string iterates by code point).
function charCount(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// A room or user name of 1 to 64 characters.
function validName(s) {
  return typeof s === 'string' && s !== '' && charCount(s) <= MAX_NAME_CHARS;
}

// Validates one text frame. Returns {kind, room, user, text, ts} or null for invalid input
// (ignored and counted in malformed). Whether the sender is in the room is the hub's
// business, not the parser's. A leave without room has room undefined.
function parseInbound(text) {
  let m;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return null;
  if (typeof m.type !== 'string') return null;
  if ('ts' in m && typeof m.ts !== 'number') return null;
  if ('room' in m && typeof m.room !== 'string') return null;
  if ('user' in m && typeof m.user !== 'string') return null;
  if ('text' in m && typeof m.text !== 'string') return null;
  switch (m.type) {
    case 'join':
      if (!validName(m.room) || !validName(m.user)) return null;
      return { kind: 'join', room: m.room, user: m.user };
    case 'chat':
      if (!validName(m.room) || typeof m.text !== 'string') return null;
      return { kind: 'chat', room: m.room, text: m.text, ts: m.ts };
    case 'ping':
      return { kind: 'ping', ts: m.ts };
    case 'leave':
      if ('room' in m && !validName(m.room)) return null;
      return { kind: 'leave', room: m.room };
    default:
      return null;
  }
}

// Broadcasts, in the field order docs/protocol.md shows, as UTF-8 bytes ready to share.
function encodeJoin(room, user, online) {
  return Buffer.from(JSON.stringify({ type: 'join', room, user, online }));
}

function encodeLeave(room, user, online) {
  return Buffer.from(JSON.stringify({ type: 'leave', room, user, online }));
}

// A chat without ts is broadcast without ts (JSON.stringify leaves out undefined).
function encodeChat(room, user, text, ts) {
  return Buffer.from(JSON.stringify({ type: 'chat', room, user, text, ts }));
}

function encodePong(ts) {
  return Buffer.from(JSON.stringify({ type: 'pong', ts }));
}

module.exports = { parseInbound, encodeJoin, encodeLeave, encodeChat, encodePong, MAX_NAME_CHARS };
