'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { Hub, Member, QUEUE_SIZE, MAX_ROOMS } = require('../lib/hub');
const { Stats } = require('../lib/stats');

// A transport that keeps what is sent; `flush()` completes the pending writes.
function fakeTransport() {
  const t = {
    sent: [],
    pending: [],
    closedWith: null,
    send(data, done) {
      t.sent.push(JSON.parse(data.toString()));
      t.pending.push(done);
    },
    close(code) {
      t.closedWith = code;
    },
    flush() {
      for (const done of t.pending.splice(0)) done();
    },
  };
  return t;
}

function joined(hub, user, room = 'public') {
  const t = fakeTransport();
  const m = new Member(hub, t);
  hub.register(m);
  m.handle(JSON.stringify({ type: 'join', room, user }));
  t.flush();
  return { m, t };
}

test('a join is broadcast to every member, the joiner included, with online', () => {
  const hub = new Hub(new Stats('t'));
  const a = joined(hub, 'a');
  const b = joined(hub, 'b');
  assert.deepEqual(a.t.sent.map((m) => [m.user, m.online]), [['a', 1], ['b', 2]]);
  assert.deepEqual(b.t.sent.map((m) => [m.user, m.online]), [['b', 2]]);
  assert.equal(hub.stats.joins, 2);
});

test('a chat reaches the others but not the sender, and counts deliveries once written', () => {
  const hub = new Hub(new Stats('t'));
  const a = joined(hub, 'a');
  const b = joined(hub, 'b');
  const c = joined(hub, 'c');
  a.m.handle('{"type":"chat","room":"public","text":"hi","ts":7}');
  assert.equal(hub.stats.deliveries, 0);
  b.t.flush();
  c.t.flush();
  assert.equal(hub.stats.deliveries, 2);
  assert.ok(!a.t.sent.some((m) => m.type === 'chat'));
  assert.deepEqual(b.t.sent.at(-1), { type: 'chat', room: 'public', user: 'a', text: 'hi', ts: 7 });
  assert.equal(hub.stats.chat_accepted, 1);
});

test('a chat or leave before join is malformed and a second join is ignored', () => {
  const hub = new Hub(new Stats('t'));
  const t = fakeTransport();
  const m = new Member(hub, t);
  m.handle('{"type":"chat","room":"public","text":"x"}');
  m.handle('{"type":"leave"}');
  assert.equal(hub.stats.malformed, 2);
  m.handle('{"type":"join","room":"public","user":"a"}');
  m.handle('{"type":"join","room":"public","user":"b"}');
  assert.equal(hub.stats.joins, 1);
  assert.equal(hub.stats.malformed, 2);
});

test('a full queue of 256 drops further messages and counts them in dropped_slow', () => {
  const hub = new Hub(new Stats('t'));
  const sender = joined(hub, 'sender');
  const slow = joined(hub, 'slow'); // never flushed again
  sender.t.flush();
  for (let i = 0; i < QUEUE_SIZE + 50; i++) {
    sender.m.limiter = { allow: () => true };
    sender.m.handle(`{"type":"chat","room":"public","text":"${i}"}`);
  }
  assert.equal(slow.m.queued, QUEUE_SIZE);
  assert.equal(hub.stats.dropped_slow, 50);
  slow.t.flush();
  assert.equal(slow.m.queued, 0);
  assert.equal(hub.stats.deliveries, QUEUE_SIZE);
});

test('the rate limit drops the eleventh chat of a burst', () => {
  const hub = new Hub(new Stats('t'));
  const a = joined(hub, 'a');
  joined(hub, 'b');
  for (let i = 0; i < 11; i++) a.m.handle('{"type":"chat","room":"public","text":"x"}');
  assert.equal(hub.stats.chat_in, 11);
  assert.equal(hub.stats.chat_accepted, 10);
  assert.equal(hub.stats.dropped_ratelimit, 1);
});

test('a leave is broadcast to the remaining members and closes with 1000', () => {
  const hub = new Hub(new Stats('t'));
  const a = joined(hub, 'a');
  const b = joined(hub, 'b');
  a.m.handle('{"type":"leave"}');
  assert.equal(a.t.closedWith, 1000);
  assert.deepEqual(b.t.sent.at(-1), { type: 'leave', room: 'public', user: 'a', online: 1 });
  hub.unregister(a.m); // the close that follows broadcasts nothing more
  assert.equal(b.t.sent.length, 2); // its own join, then a's leave
});

test('a join and a chat reach their own room only, and online counts that room', () => {
  const hub = new Hub(new Stats('t'));
  const a = joined(hub, 'a', 'r1');
  const b = joined(hub, 'b', 'r2');
  const c = joined(hub, 'c', 'r1');
  assert.deepEqual(b.t.sent, [{ type: 'join', room: 'r2', user: 'b', online: 1 }]);
  assert.deepEqual(c.t.sent, [{ type: 'join', room: 'r1', user: 'c', online: 2 }]);
  a.m.handle('{"type":"chat","room":"r1","text":"hi"}');
  assert.deepEqual(c.t.sent.at(-1), { type: 'chat', room: 'r1', user: 'a', text: 'hi' });
  assert.equal(b.t.sent.length, 1);
  // a joins r2 as well, under another claimed name: the broadcast keeps its first name.
  a.m.handle('{"type":"join","room":"r2","user":"other"}');
  assert.deepEqual(b.t.sent.at(-1), { type: 'join', room: 'r2', user: 'a', online: 2 });
  assert.equal(c.t.sent.length, 2);
});

test('a leave with a room leaves that room only and keeps the connection open', () => {
  const hub = new Hub(new Stats('t'));
  const a = joined(hub, 'a', 'r1');
  const b = joined(hub, 'b', 'r1');
  const c = joined(hub, 'c', 'r2');
  a.m.handle('{"type":"join","room":"r2","user":"a"}');
  a.m.handle('{"type":"leave","room":"r1"}');
  assert.equal(a.t.closedWith, null);
  assert.deepEqual(b.t.sent.at(-1), { type: 'leave', room: 'r1', user: 'a', online: 1 });
  a.m.handle('{"type":"chat","room":"r1","text":"gone"}');
  a.m.handle('{"type":"leave","room":"r1"}');
  assert.equal(hub.stats.malformed, 2);
  c.m.handle('{"type":"chat","room":"r2","text":"still"}');
  assert.deepEqual(a.t.sent.at(-1), { type: 'chat', room: 'r2', user: 'c', text: 'still' });
  a.m.handle('{"type":"leave"}');
  assert.equal(a.t.closedWith, 1000);
  assert.deepEqual(c.t.sent.at(-1), { type: 'leave', room: 'r2', user: 'a', online: 1 });
});

test('a second join to a room is ignored and a join to a 17th room is malformed', () => {
  const hub = new Hub(new Stats('t'));
  const a = joined(hub, 'a', 'r0');
  a.m.handle('{"type":"join","room":"r0","user":"a"}');
  assert.equal(hub.stats.joins, 1);
  assert.equal(hub.stats.malformed, 0);
  for (let i = 1; i <= MAX_ROOMS; i++) a.m.handle(JSON.stringify({ type: 'join', room: `r${i}`, user: 'a' }));
  assert.equal(a.m.rooms.size, MAX_ROOMS);
  assert.equal(hub.stats.joins, MAX_ROOMS);
  assert.equal(hub.stats.malformed, 1);
  assert.ok(!hub.rooms.has(`r${MAX_ROOMS}`));
});

test('a disconnect leaves every room, and an emptied room is forgotten', () => {
  const hub = new Hub(new Stats('t'));
  const a = joined(hub, 'a', 'r1');
  a.m.handle('{"type":"join","room":"r2","user":"a"}');
  const b = joined(hub, 'b', 'r1');
  const c = joined(hub, 'c', 'r2');
  hub.unregister(a.m);
  assert.deepEqual(b.t.sent.at(-1), { type: 'leave', room: 'r1', user: 'a', online: 1 });
  assert.deepEqual(c.t.sent.at(-1), { type: 'leave', room: 'r2', user: 'a', online: 1 });
  hub.unregister(b.m);
  hub.unregister(c.m);
  assert.equal(hub.rooms.size, 0);
});
