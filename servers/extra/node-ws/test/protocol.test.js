'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { parseInbound, encodeChat, encodePong } = require('../lib/protocol');

test('a valid join, chat, ping and leave are parsed', () => {
  assert.deepEqual(parseInbound('{"type":"join","room":"public","user":"alice"}'), {
    kind: 'join',
    user: 'alice',
  });
  assert.deepEqual(parseInbound('{"type":"chat","room":"public","text":"hi","ts":12.5}'), {
    kind: 'chat',
    text: 'hi',
    ts: 12.5,
  });
  assert.deepEqual(parseInbound('{"type":"ping"}'), { kind: 'ping', ts: undefined });
  assert.deepEqual(parseInbound('{"type":"leave"}'), { kind: 'leave' });
});

test('every kind of invalid input the protocol lists is refused', () => {
  for (const bad of [
    'not json',
    '[1,2]',
    '"join"',
    'null',
    '{}',
    '{"type":"shout"}',
    '{"type":"join","room":"public","user":""}',
    `{"type":"join","room":"public","user":"${'x'.repeat(65)}"}`,
    '{"type":"join","room":"private","user":"a"}',
    '{"type":"join","user":"a"}',
    '{"type":"chat","room":"public","text":5}',
    '{"type":"chat","room":"public","text":"a","ts":"x"}',
    '{"type":"chat","room":"public"}',
    '{"type":"ping","ts":null}',
  ]) {
    assert.equal(parseInbound(bad), null, bad);
  }
});

test('a user of 64 characters counts code points, not UTF-16 units', () => {
  const user = '😀'.repeat(64);
  assert.equal(parseInbound(JSON.stringify({ type: 'join', room: 'public', user })).user, user);
  const long = '😀'.repeat(65);
  assert.equal(parseInbound(JSON.stringify({ type: 'join', room: 'public', user: long })), null);
});

test('a chat without ts is broadcast without ts, and a pong echoes ts', () => {
  assert.equal(
    encodeChat('a', 'hi', undefined).toString(),
    '{"type":"chat","room":"public","user":"a","text":"hi"}',
  );
  assert.equal(encodePong(42.5).toString(), '{"type":"pong","ts":42.5}');
  assert.equal(encodePong(undefined).toString(), '{"type":"pong"}');
});
