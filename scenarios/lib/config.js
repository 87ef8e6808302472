// Owns the environment interface every scenario shares: WS_URL, MODE, LOADGEN,
// SUMMARY_PATH, NATIVE_PATH, INSTANCE, LATENCY_PROBE_EVERY, TLS_CA_FILE, DEFLATE, and the load parameters a sweep sets
// (CLIENTS, RATE, ROOM_SIZE, SLOW_SHARE, DELIVERIES, USERS, PING_S, CHAT_S, CHURN; see SWEEP_KEYS in
// modes.js for which shape takes which).
//
// Read once in the init context, so a missing or malformed setting stops k6
// before a single VU starts, with a message that says what to set.

export const MODES = ['smoke', 'quick', 'seed', 'soak'];

function readWsUrl() {
  const url = __ENV.WS_URL;
  if (!url) {
    throw new Error('WS_URL is required, e.g. WS_URL=ws://127.0.0.1:18080/ws');
  }
  if (!/^wss?:\/\//.test(url)) {
    throw new Error(`WS_URL must start with ws:// or wss://, got "${url}"`);
  }
  return url;
}

function readMode() {
  const mode = __ENV.MODE || 'quick';
  if (!MODES.includes(mode)) {
    throw new Error(`MODE must be one of ${MODES.join(', ')}, got "${mode}"`);
  }
  return mode;
}

/**
 * The load paths: `native` runs each client in Go inside k6 (the k6/x/chat
 * extension, scenarios/k6-chat), `js` through k6/websockets and JavaScript.
 */
export const LOADGENS = ['native', 'js'];

function readLoadgen() {
  const loadgen = __ENV.LOADGEN || 'native';
  if (!LOADGENS.includes(loadgen)) {
    throw new Error(`LOADGEN must be one of ${LOADGENS.join(', ')}, got "${loadgen}"`);
  }
  return loadgen;
}

/**
 * The load parameters given in the environment (`wscbench run --sweep`), each
 * under its upper-case name with '-' as '_': `clients` a positive whole number,
 * `rate` (chats per second per client) a positive number, `room-size`
 * (ROOM_SIZE, clients per fanout room) a whole number of at least 2,
 * `slow-share` (SLOW_SHARE, the share of slow-consumers' clients that are slow)
 * a fraction between 0 and 1, both excluded. Absent ones are left out, so the
 * shape keeps its mode's default.
 */
const LOAD_PARAM_RULES = [
  ['clients', 'a positive whole number', (v) => Number.isInteger(v) && v > 0],
  ['rate', 'a positive number', (v) => v > 0],
  ['room-size', 'a whole number of at least 2', (v) => Number.isInteger(v) && v >= 2],
  ['slow-share', 'a fraction between 0 and 1 (both excluded)', (v) => v > 0 && v < 1],
  ['deliveries', 'positive numbers, comma-separated', (v) => v > 0],
  ['users', 'a positive whole number', (v) => Number.isInteger(v) && v > 0],
  ['ping-s', 'a positive number of seconds', (v) => v > 0],
  ['chat-s', 'a positive number of seconds', (v) => v > 0],
  ['churn', 'a percentage from 0 to 100', (v) => v >= 0 && v <= 100],
];

/** The load parameters given as a list: DELIVERIES=50000,100000 (the curve's levels). */
const LIST_PARAMS = ['deliveries'];

function readLoadParams() {
  const params = {};
  for (const [key, what, valid] of LOAD_PARAM_RULES) {
    const name = key.toUpperCase().replace(/-/g, '_');
    const text = __ENV[name];
    if (text === undefined || text === '') continue;
    // The load curve's levels are a list, every level inside one point.
    const values = (LIST_PARAMS.includes(key) ? text.split(',') : [text]).map(Number);
    if (!values.every((value) => Number.isFinite(value) && valid(value))) {
      throw new Error(`${name} must be ${what}, got "${text}"`);
    }
    params[key] = LIST_PARAMS.includes(key) ? values : values[0];
  }
  return params;
}

/**
 * This k6 instance's number (1..N) when a run is split over N instances with
 * --execution-segment; 0 (unset) otherwise. It keeps user names unique across
 * instances (each numbers its VUs from 1) and is stamped in native chats.
 */
function readInstance() {
  const text = __ENV.INSTANCE || '0';
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 10000) {
    throw new Error(`INSTANCE must be an integer from 0 to 10000, got "${text}"`);
  }
  return n;
}

/**
 * One native client in LATENCY_PROBE_EVERY (k6/x/chat, "Latency probes" in
 * scenarios/k6-chat/client.go) times the chats it receives; the others count
 * them. Unset, the extension's default holds (10); 1 makes every client a probe.
 */
function readSampling() {
  const text = __ENV.LATENCY_PROBE_EVERY;
  if (text === undefined || text === '') return {};
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new Error(`LATENCY_PROBE_EVERY must be an integer from 1 to 1000, got "${text}"`);
  }
  return { latencyProbeEvery: n };
}

/**
 * The transport options of the native client (k6/x/chat, docs/transports.md):
 * TLS_CA_FILE, the PEM certificate a wss:// server's must chain to (the run's
 * own, self-signed); DEFLATE=1 offers permessage-deflate and counts a
 * handshake without it as a failed connect. Only the native load path has them.
 */
function readTransport() {
  const opts = {};
  const ca = __ENV.TLS_CA_FILE;
  if (ca) opts.caFile = ca;
  const deflate = __ENV.DEFLATE || '0';
  if (deflate !== '0' && deflate !== '1') {
    throw new Error(`DEFLATE must be 0 or 1, got "${deflate}"`);
  }
  if (deflate === '1') opts.deflate = true;
  return opts;
}

export const config = {
  wsUrl: readWsUrl(),
  mode: readMode(),
  loadgen: readLoadgen(),
  summaryPath: __ENV.SUMMARY_PATH || 'summary.json',
  nativePath: __ENV.NATIVE_PATH || 'native.json',
  loadParams: readLoadParams(),
  instance: readInstance(),
  /** Options for chat.session(): which native clients time chats. */
  sampling: readSampling(),
  /** Options for chat.session(): TLS and permessage-deflate. */
  transport: readTransport(),
};
