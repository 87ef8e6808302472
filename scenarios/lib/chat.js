// Owns the chat client every scenario runs: one WebSocket session that
// connects, joins the public room, chats, leaves and closes cleanly, and the
// metrics it records along the way. See docs/protocol.md for the messages.
//
// A session is event-driven: `runSession` only sets it up, and k6 keeps the
// iteration alive until the socket has closed and every timer is cleared.
import exec from 'k6/execution';
import { WebSocket } from 'k6/websockets';
import { Counter, Trend } from 'k6/metrics';
import chat from 'k6/x/chat';
import { config } from './config.js';
import { clockNow } from './clock.js';

export const chatSent = new Counter('chat_sent');
/** Chats from other members; the server never echoes a chat to its sender. */
export const chatReceived = new Counter('chat_received');
/** ms from the sender stamping `ts` to the receiver reading the frame off its socket. */
export const chatLatency = new Trend('chat_latency', true);
/** Connections that never opened (refused, failed upgrade, ...). */
export const connectErrors = new Counter('connect_errors');
/** Opened sessions that closed with a code other than 1000/1001 (1006 included) or none. */
export const abnormalCloses = new Counter('abnormal_closes');
/** Every `error` event, connect failures included, but the harmless ErrCloseSent (see below). */
export const wsErrors = new Counter('ws_errors');
/**
 * Every session whose close event ran. k6 reports interrupted iterations only
 * on its progress line, never in the summary; ws_sessions - sessions_closed is
 * the number of sessions k6 cut off at the end of an executor.
 */
export const sessionsClosed = new Counter('sessions_closed');

const ALL_COUNTERS = [chatSent, chatReceived, connectErrors, abnormalCloses, wsErrors, sessionsClosed];

/**
 * Adds 0 to every counter, so each appears in the summary even when nothing
 * happened (k6 leaves metrics without samples out). Call it from setup().
 */
export function touchCounters() {
  for (const counter of ALL_COUNTERS) counter.add(0);
}

/**
 * How long before the first member leaves that every client stops chatting,
 * so each chat reaches every member while all are still in the room and
 * chat_received can be compared with the server's `deliveries`.
 */
export const QUIET_BEFORE_LEAVE_MS = 1000;

// How long a client waits for the server's close after it sent leave, before
// it closes the socket itself.
const CLOSE_WAIT_MS = 2000;
const CHAT_TEXT = 'hello from k6';
// After a failed connect or an abnormal close the iteration lingers this long,
// so a dead server sees a bounded trickle of reconnects rather than a spin.
const RETRY_PAUSE_MS = 1000;
// gorilla/websocket's ErrCloseSent, as k6 reports it in an error event.
const CLOSE_SENT = 'websocket: close sent';
// WebSocket.readyState value; k6/websockets exports no named constants.
const OPEN = 1;

/**
 * One client session on the load path LOADGEN names (see config.js): natively
 * in Go (the default), or in JavaScript. Both take the same options, record
 * the same metrics and end the same way.
 */
export function runSession(setupData, opts) {
  if (config.loadgen === 'native') {
    runNativeSession(opts);
  } else {
    runJsSession(setupData, opts);
  }
}

/**
 * The session in Go (k6/x/chat): the call blocks until the session has ended
 * and counts without a k6 sample per frame. It stamps `ts` on its own clock,
 * so setupData's clockBaseMs is not needed.
 */
function runNativeSession({ chats, chatsPerSecond, stopChatAt, leaveAt, stayMs }) {
  const opts = { url: config.wsUrl, user: userName(), ...config.sampling, ...config.transport };
  if (instance() > 0) opts.instance = instance();
  if (chats !== undefined) opts.chats = chats;
  if (chatsPerSecond !== undefined) opts.chatsPerSecond = chatsPerSecond;
  if (stopChatAt !== undefined && Number.isFinite(stopChatAt)) opts.stopChatAt = stopChatAt;
  if (leaveAt !== undefined) opts.leaveAt = leaveAt;
  if (stayMs !== undefined) opts.stayMs = stayMs;
  chat.session(opts);
}

/** A fraction as k6 writes segment points: `0`, `1`, `2/3`. */
function fraction(text) {
  const [num, den] = String(text).split('/');
  return Number(num) / (den === undefined ? 1 : Number(den));
}

/**
 * This instance's number in a split run, 1..N: INSTANCE (wscbench sets it), or
 * else where this instance's --execution-segment starts in the shared
 * --execution-segment-sequence (how k6-operator's runners tell themselves
 * apart); 0 when the run is not split. Test options are readable only from a
 * VU, hence computed on the first call.
 */
let instanceNumber;
function instance() {
  if (instanceNumber !== undefined) return instanceNumber;
  instanceNumber = config.instance;
  const { executionSegment, executionSegmentSequence } = exec.test.options;
  if (instanceNumber === 0 && executionSegment && executionSegmentSequence) {
    const start = fraction(String(executionSegment).split(':')[0]);
    const at = String(executionSegmentSequence)
      .split(',')
      .findIndex((point) => Math.abs(fraction(point) - start) < 1e-9);
    instanceNumber = at + 1;
  }
  return instanceNumber;
}

/**
 * `k6-<VU>-<iteration>`, or `k6-<instance>-<VU>-<iteration>` in a split run,
 * where every instance numbers its VUs from 1.
 */
function userName() {
  const n = instance();
  return n > 0 ? `k6-${n}-${__VU}-${__ITER}` : `k6-${__VU}-${__ITER}`;
}

/**
 * One client session, named as userName() says (unique per VU and
 * iteration, 1-64 characters as the protocol wants). `setupData` is what
 * setup() returned: its clockBaseMs stamps chats (see clock.js).
 * - chats: how many chats to send as soon as the join comes back, or
 * - chatsPerSecond: chat at this rate from the join until stopChatAt; the
 *   first chat waits a random part of a period, so that clients started
 *   together do not chat in lockstep.
 * - stopChatAt: epoch ms after which no chat is sent, so that chats in flight
 *   reach everyone before members start leaving.
 * - leaveAt: epoch ms at which to leave, or
 * - stayMs: how long to stay after the join comes back, then leave.
 *
 * Leaving runs on time even when k6 is behind: timers and frames share one
 * event loop per VU, so when frames arrive faster than k6 handles them (the
 * burst's join storm, saturation) a timer fires only after the frames queued
 * before it. Each frame therefore also checks the clock, and a client that is
 * still open CLOSE_WAIT_MS after its leave closes with 1000, after which k6
 * drops its queued frames unread instead of handing each to JS.
 */
function runJsSession(setupData, { chats = 0, chatsPerSecond = 0, stopChatAt = Infinity, leaveAt, stayMs }) {
  const user = userName();
  const clockBase = setupData.clockBaseMs;
  const ws = new WebSocket(config.wsUrl);
  const timers = [];
  let opened = false;
  let joined = false;
  let chatTimer = null;
  // The next deadline a frame must check: leaveBy until we leave, then closeBy.
  let leaveBy = leaveAt === undefined ? Infinity : leaveAt;
  let closeBy = Infinity;
  let deadline = leaveBy;
  const ownJoin = `"${user}"`;

  const later = (fn, ms) => timers.push(setTimeout(fn, Math.max(0, ms)));

  const stopChatting = () => {
    if (chatTimer !== null) clearInterval(chatTimer);
    chatTimer = null;
  };

  const closeNow = () => {
    if (ws.readyState === OPEN) ws.close(1000);
  };

  const leave = () => {
    if (closeBy !== Infinity || ws.readyState !== OPEN) return;
    stopChatting();
    ws.send('{"type":"leave"}');
    // The server answers leave by closing with 1000; close ourselves if it does not.
    closeBy = Date.now() + CLOSE_WAIT_MS;
    deadline = closeBy;
    later(closeNow, CLOSE_WAIT_MS);
  };

  const onDeadline = () => (closeBy === Infinity ? leave() : closeNow());

  const sendChat = () => {
    if (Date.now() >= stopChatAt || ws.readyState !== OPEN || closeBy !== Infinity) {
      stopChatting();
      return;
    }
    const ts = clockNow(clockBase).toFixed(3);
    ws.send(`{"type":"chat","room":"public","text":"${CHAT_TEXT}","ts":${ts}}`);
    chatSent.add(1);
  };

  const onJoined = () => {
    joined = true;
    if (stayMs !== undefined) {
      leaveBy = Date.now() + stayMs;
      deadline = leaveBy;
      later(leave, stayMs);
    }
    for (let i = 0; i < chats; i++) sendChat();
    if (chatsPerSecond > 0) {
      const periodMs = 1000 / chatsPerSecond;
      later(() => {
        sendChat();
        if (chatTimer === null && closeBy === Infinity) chatTimer = setInterval(sendChat, periodMs);
      }, Math.random() * periodMs);
    }
  };

  ws.addEventListener('open', () => {
    opened = true;
    ws.send(`{"type":"join","room":"public","user":"${user}"}`);
    if (leaveBy !== Infinity) later(leave, leaveBy - Date.now());
  });

  // Runs for every frame, and under saturation k6 gets more frames than it can
  // handle, so chats are read without JSON.parse (a quarter of k6's CPU when
  // it parsed them). That is exact because every user name and text in the
  // room is ours and contains neither "chat" nor "ts", and quotes inside JSON
  // strings are escaped: '"chat"' occurs only as a chat's type and '"ts":'
  // only as its key, whatever the key order or spacing. Only our own join is
  // parsed, until it arrives.
  ws.addEventListener('message', (e) => {
    const data = e.data;
    if (data.indexOf('"chat"') !== -1) {
      chatReceived.add(1);
      const at = data.indexOf('"ts":');
      if (at !== -1) {
        const ts = parseFloat(data.substring(at + 5));
        if (!Number.isNaN(ts)) chatLatency.add(e.timestamp - ts);
      }
    } else if (!joined && data.indexOf(ownJoin) !== -1) {
      const msg = JSON.parse(data);
      if (msg.type === 'join' && msg.user === user) onJoined();
    }
    if (Date.now() >= deadline) onDeadline();
  });

  ws.addEventListener('error', (e) => {
    // k6 answers a server ping with a pong from another goroutine; when the
    // ping arrived just before the server's close, the pong can lose the race
    // to k6's close reply and fail with ErrCloseSent. The session still closes
    // with 1000, and with 30 s server pings and 60 s sessions it is common.
    if (e.error === CLOSE_SENT) return;
    wsErrors.add(1);
    if (!opened) connectErrors.add(1);
  });

  ws.addEventListener('close', (e) => {
    stopChatting();
    for (const id of timers) clearTimeout(id);
    sessionsClosed.add(1);
    const abnormal = opened && e.code !== 1000 && e.code !== 1001;
    if (abnormal) abnormalCloses.add(1);
    if (!opened || abnormal) setTimeout(() => {}, RETRY_PAUSE_MS);
  });
}
