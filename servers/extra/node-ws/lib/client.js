// client.js owns one connection: the upgrade's WebSocket from ws, its reader (size limit,
// read deadline, the rules of docs/protocol.md) and its writer (pings, the close).
'use strict';

const { Member } = require('./hub');

const MAX_MESSAGE_BYTES = 4096; // ws closes a larger message with 1009
const PING_EVERY_MS = 30_000;
const READ_DEADLINE_MS = 60_000;
const TICK_MS = 10_000; // the read deadline is checked this often: a silent peer goes within 60-70 s
const CLOSE_WAIT_MS = 500; // how long a close frame waits for the peer's answer

// The options every WebSocketServer of this server is made with.
const WS_OPTIONS = {
  noServer: true,
  maxPayload: MAX_MESSAGE_BYTES,
  perMessageDeflate: false,
  clientTracking: false,
};

// Serves one upgraded connection until it closes.
function serveWs(hub, ws) {
  const stats = hub.stats;
  let closeTimer = null;
  const transport = {
    // binary: false: the shared Buffer goes out as a text frame.
    send: (data, done) => ws.send(data, { binary: false }, done),
    close: (code) => {
      ws.close(code);
      // ws waits 30 s for the peer's answer; the protocol's servers wait 500 ms.
      closeTimer = setTimeout(() => ws.terminate(), CLOSE_WAIT_MS);
      closeTimer.unref();
    },
  };
  const member = new Member(hub, transport);
  if (!hub.register(member)) {
    ws.close(1001);
    return;
  }
  stats.connections_current++;
  stats.connections_total++;

  let lastHeard = Date.now();
  const heard = () => {
    lastHeard = Date.now();
  };
  ws.on('ping', heard);
  ws.on('pong', heard);
  ws.on('message', (data, isBinary) => {
    heard();
    stats.frames_in++;
    if (isBinary) {
      stats.malformed++;
      return;
    }
    member.handle(data.toString('utf8'));
  });

  // The writer's side of liveness: a ping every 30 s, and a connection silent for 60 s
  // dropped (its leave is broadcast when it closes).
  let lastPing = Date.now();
  const ticker = setInterval(() => {
    const now = Date.now();
    if (now - lastHeard > READ_DEADLINE_MS) {
      ws.terminate();
      return;
    }
    if (now - lastPing >= PING_EVERY_MS) {
      lastPing = now;
      ws.ping();
    }
  }, TICK_MS);
  ticker.unref();

  ws.on('error', () => {}); // an invalid frame, a reset: 'close' follows
  ws.on('close', () => {
    clearInterval(ticker);
    if (closeTimer) clearTimeout(closeTimer);
    member.closing = true;
    stats.connections_current--;
    hub.unregister(member);
  });
}

module.exports = { serveWs, WS_OPTIONS, MAX_MESSAGE_BYTES };
