// server.js owns the process: flags, routes, and the shutdown docs/protocol.md asks for
// (stop accepting, close clients with 1001, print the final stats as the last line of
// stdout, exit 0 within 2 s).
'use strict';

const http = require('node:http');
const { parseArgs } = require('node:util');
const { WebSocketServer } = require('ws');

const { Hub, CLOSE_GOING_AWAY } = require('./lib/hub');
const { Stats } = require('./lib/stats');
const { serveWs, WS_OPTIONS } = require('./lib/client');

// The image tag, reported as "server" in /stats.
const SERVER_TAG = 'wscx-node-ws';
// How long shutdown waits for the clients' close answers before it exits.
const CONN_SHUTDOWN_WAIT_MS = 1200;

function log(...args) {
  console.error(SERVER_TAG, ...args);
}

function parseFlags(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: 'string', default: '0.0.0.0' },
      port: { type: 'string', default: '8080' },
      duration: { type: 'string', default: '0' },
    },
  });
  const port = Number(values.port);
  const duration = Number(values.duration);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad --port ${values.port}`);
  if (!(duration >= 0)) throw new Error(`bad --duration ${values.duration}`);
  return { host: values.host, port, duration };
}

// The HTTP routes: /ws upgrades, /health and /stats answer, anything else is 404.
function makeServer(hub) {
  const wss = new WebSocketServer(WS_OPTIONS);
  const server = http.createServer((req, res) => {
    const path = req.url.split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    } else if (req.method === 'GET' && path === '/stats') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(hub.stats.json());
    } else if (path === '/ws') {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end('expected a WebSocket upgrade');
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    }
  });
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => {});
    if (req.url.split('?')[0] !== '/ws' || hub.closed) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveWs(hub, ws));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  // A client that trickles its request headers is cut off after 10 s.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  return server;
}

function main() {
  let flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (err) {
    log(err.message);
    process.exit(2);
  }
  const stats = new Stats(SERVER_TAG);
  const hub = new Hub(stats);
  const server = makeServer(hub);

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close();
    hub.shutdown(CLOSE_GOING_AWAY);
    const finish = () => {
      process.stdout.write(stats.json() + '\n', () => process.exit(0));
    };
    const started = Date.now();
    const waitForClients = () => {
      if (hub.clients.size === 0 || Date.now() - started >= CONN_SHUTDOWN_WAIT_MS) finish();
      else setTimeout(waitForClients, 20);
    };
    waitForClients();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (flags.duration > 0) setTimeout(stop, flags.duration * 1000);

  server.on('error', (err) => {
    log(`listen: ${err.message}`);
    process.exit(1);
  });
  server.listen(flags.port, flags.host, () => {
    const addr = server.address();
    log(`listening on ${addr.address}:${addr.port}`);
  });
}

if (require.main === module) main();

module.exports = { makeServer, parseFlags, SERVER_TAG };
