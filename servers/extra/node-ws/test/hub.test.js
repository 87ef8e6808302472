'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { Hub, Member, QUEUE_SIZE } = require('../lib/hub');
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

function joined(hub, user) {
  const t = fakeTransport();
  const m = new Member(hub, t);
  hub.register(m);
  m.handle(JSON.stringify({ type: 'join', room: 'public', user }));
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
