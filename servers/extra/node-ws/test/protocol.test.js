'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { parseInbound, encodeChat, encodePong } = require('../lib/protocol');

test('a valid join, chat, ping and leave are parsed', () => {
  assert.deepEqual(parseInbound('{"type":"join","room":"public","user":"alice"}'), {
    kind: 'join',
    room: 'public',
    user: 'alice',
  });
  assert.deepEqual(parseInbound('{"type":"chat","room":"lobby","text":"hi","ts":12.5}'), {
    kind: 'chat',
    room: 'lobby',
    text: 'hi',
    ts: 12.5,
  });
  assert.deepEqual(parseInbound('{"type":"ping"}'), { kind: 'ping', ts: undefined });
  assert.deepEqual(parseInbound('{"type":"leave"}'), { kind: 'leave', room: undefined });
  assert.deepEqual(parseInbound('{"type":"leave","room":"lobby"}'), { kind: 'leave', room: 'lobby' });
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
    '{"type":"join","user":"a"}',
    '{"type":"join","room":"","user":"a"}',
    `{"type":"join","room":"${'r'.repeat(65)}","user":"a"}`,
    '{"type":"join","room":7,"user":"a"}',
    '{"type":"chat","text":"a"}',
    '{"type":"chat","room":"","text":"a"}',
    `{"type":"chat","room":"${'r'.repeat(65)}","text":"a"}`,
    '{"type":"leave","room":""}',
    '{"type":"leave","room":null}',
    '{"type":"chat","room":"public","text":5}',
    '{"type":"chat","room":"public","text":"a","ts":"x"}',
    '{"type":"chat","room":"public"}',
    '{"type":"ping","ts":null}',
  ]) {
    assert.equal(parseInbound(bad), null, bad);
  }
});

test('a user or room of 64 characters counts code points, not UTF-16 units', () => {
  const name = '😀'.repeat(64);
  const long = '😀'.repeat(65);
  assert.equal(parseInbound(JSON.stringify({ type: 'join', room: 'public', user: name })).user, name);
  assert.equal(parseInbound(JSON.stringify({ type: 'join', room: 'public', user: long })), null);
  assert.equal(parseInbound(JSON.stringify({ type: 'join', room: name, user: 'a' })).room, name);
  assert.equal(parseInbound(JSON.stringify({ type: 'join', room: long, user: 'a' })), null);
});

test('a chat without ts is broadcast without ts, and a pong echoes ts', () => {
  assert.equal(
    encodeChat('public', 'a', 'hi', undefined).toString(),
    '{"type":"chat","room":"public","user":"a","text":"hi"}',
  );
  assert.equal(encodePong(42.5).toString(), '{"type":"pong","ts":42.5}');
  assert.equal(encodePong(undefined).toString(), '{"type":"pong"}');
});
