'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const WebSocket = require('ws');
const { makeServer } = require('../server.js');
const { Hub } = require('../lib/hub');
const { Stats } = require('../lib/stats');

function listening() {
  const hub = new Hub(new Stats('wscx-node-ws'));
  const server = makeServer(hub);
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ hub, server, port: server.address().port }));
  });
}

function nextMessage(ws) {
  return new Promise((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()))));
}

test('health, stats and 404 answer over HTTP', async () => {
  const { server, port } = await listening();
  try {
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(await health.text(), 'ok');
    const stats = await fetch(`http://127.0.0.1:${port}/stats`);
    assert.equal(stats.headers.get('content-type'), 'application/json');
    assert.equal((await stats.json()).server, 'wscx-node-ws');
    assert.equal((await fetch(`http://127.0.0.1:${port}/nope`)).status, 404);
  } finally {
    server.close();
  }
});

test('a join over a real socket is acknowledged and a message over 4096 bytes closes with 1009', async () => {
  const { hub, server, port } = await listening();
  try {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send('{"type":"join","room":"public","user":"alice"}');
    assert.deepEqual(await nextMessage(ws), { type: 'join', room: 'public', user: 'alice', online: 1 });
    const closed = new Promise((resolve) => ws.once('close', resolve));
    ws.send('x'.repeat(4097));
    assert.equal(await closed, 1009);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(hub.stats.connections_current, 0);
  } finally {
    server.close();
  }
});
