// protocol.js owns the wire format of docs/protocol.md: the messages a client may send,
// how they are validated, and the broadcasts the hub serializes once.
'use strict';

const ROOM = 'public';
const MAX_USER_CHARS = 64;

// The number of Unicode scalar values in s (a string iterates by code point).
function charCount(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// Validates one text frame. Returns {kind, user, text, ts} or null for invalid input
// (ignored and counted in malformed). Whether the sender has joined is the client's
// business, not the parser's.
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
      if (m.room !== ROOM) return null;
      if (typeof m.user !== 'string' || m.user === '' || charCount(m.user) > MAX_USER_CHARS) {
        return null;
      }
      return { kind: 'join', user: m.user };
    case 'chat':
      if (m.room !== ROOM || typeof m.text !== 'string') return null;
      return { kind: 'chat', text: m.text, ts: m.ts };
    case 'ping':
      return { kind: 'ping', ts: m.ts };
    case 'leave':
      return { kind: 'leave' };
    default:
      return null;
  }
}

// Broadcasts, in the field order docs/protocol.md shows, as UTF-8 bytes ready to share.
function encodeJoin(user, online) {
  return Buffer.from(JSON.stringify({ type: 'join', room: ROOM, user, online }));
}

function encodeLeave(user, online) {
  return Buffer.from(JSON.stringify({ type: 'leave', room: ROOM, user, online }));
}

// A chat without ts is broadcast without ts (JSON.stringify leaves out undefined).
function encodeChat(user, text, ts) {
  return Buffer.from(JSON.stringify({ type: 'chat', room: ROOM, user, text, ts }));
}

function encodePong(ts) {
  return Buffer.from(JSON.stringify({ type: 'pong', ts }));
}

module.exports = { parseInbound, encodeJoin, encodeLeave, encodeChat, encodePong, ROOM };
