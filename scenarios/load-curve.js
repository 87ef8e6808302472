// load-curve: what a delivery costs, and how late it arrives, at each level of
// offered load, the levels inside one point.
//
// Shape: `clients` in rooms of `roomSize` (quick: one room of 500), the
// fixed-rate rooms shape of lib/rooms.js (as fanout): the rooms join during a
// ramp in which nobody chats (a room's join storm is no level's load), then
// each level of `steps` deliveries per second in turn (quick: 50k, 100k, 200k
// and 400k; DELIVERIES=... for others): a rate change that settles, then a
// measured hold, each client chatting DELIVERIES / (clients · (roomSize − 1))
// times a second from intended times, so a server that falls behind shows it
// in latency, never by slowing its clients down (loadCurveLevels in
// lib/modes.js). k6/x/chat keeps a window of counters and histograms per hold
// (chat.schedule); the orchestrator splits the point into one result per level.
// A monitor reads each hold as it ends and stops the test at a level the
// server cannot carry or k6 cannot drive: less than LEVEL_DELIVERED_SHARE of
// what it offered arrived, response time p95 over LEVEL_LATE_FACTOR times the
// latency target (SLO_P99_MS), or client errors; the orchestrator applies the
// same rule to the windows and records the levels above as not run.
// Native load path only.
//
// Measures: per level, the share of the offered deliveries that arrived,
// latency p50/p99 from intended times, deliveries per server CPU-second (its
// inverse: CPU per 1,000 deliveries), memory and k6's own CPU; the report
// reads the levels together (docs/methodology.md, "The load curve").
import exec from 'k6/execution';
import { sleep } from 'k6';
import chat from 'k6/x/chat';
import { GRACE_SECONDS, defineScenario, scenarioClock } from './lib/scenario.js';
import { QUIET_BEFORE_LEAVE_MS } from './lib/chat.js';
import { loadCurveLevels, shapeOf } from './lib/modes.js';
import { nativeOnly, sessionBase, unique } from './lib/rooms.js';

/** A level ends the point when less than this share of what it offered arrived. */
export const LEVEL_DELIVERED_SHARE = 0.9;
/** ... or when its response time p95 passed this many times the latency target. */
export const LEVEL_LATE_FACTOR = 4;

nativeOnly('load-curve');
const shape = shapeOf('load-curve');
const { levels, chatsEnd, end } = loadCurveLevels(shape);
const rooms = Math.floor(shape.clients / shape.roomSize);
const slo = sloP99Ms();
const maxDuration = `${end + 5 + GRACE_SECONDS}s`;

const base = defineScenario('load-curve', shape, {
  executor: 'per-vu-iterations',
  exec: 'room',
  vus: rooms,
  iterations: 1,
  maxDuration,
});
base.options.scenarios.monitor = { executor: 'per-vu-iterations', exec: 'monitor', vus: 1, iterations: 1, maxDuration };
export const { options, setup, handleSummary } = base;

function sloP99Ms() {
  const raw = __ENV.SLO_P99_MS;
  if (raw === undefined || raw === '') return 50;
  const n = Number(raw);
  if (!(n > 0) || !Number.isFinite(n)) throw new Error(`SLO_P99_MS must be a positive number, got "${raw}"`);
  return n;
}

/** Hands k6/x/chat one window per level's hold (every VU calls it; the first call counts). */
function schedule() {
  chat.schedule({
    steps: levels.map((l) => ({ clients: shape.clients, fromMs: scenarioClock(l.holdFrom), toMs: scenarioClock(l.to) })),
  });
}

/**
 * One VU is one room of roomSize clients: it connects in the first half of the ramp, is
 * silent through the rest of it, then chats at each level's rate from the level's start.
 */
export function room() {
  schedule();
  const index = exec.scenario.iterationInTest;
  const startAt = scenarioClock((index / rooms) * shape.rampSeconds * 0.5);
  const wait = startAt - Date.now();
  if (wait > 0) sleep(wait / 1000);
  chat.session({
    ...sessionBase(),
    user: unique('k6', index + 1),
    clients: shape.roomSize,
    room: unique('room', index + 1),
    chatsPerSecond: 0,
    rateChanges: levels.map((l) => [scenarioClock(l.start), l.chatsPerSecond]),
    stopChatAt: scenarioClock(chatsEnd),
    leaveAt: scenarioClock(chatsEnd) + QUIET_BEFORE_LEAVE_MS,
  });
}

/** Why level i cannot count towards the curve's next, or '' when it can. */
function ended(st, level) {
  if (st.errors > 0) return `${st.errors} client errors`;
  const offered = st.chats_intended * (shape.roomSize - 1);
  if (offered > 0 && st.chat_received < LEVEL_DELIVERED_SHARE * offered) {
    return `${((100 * st.chat_received) / offered).toFixed(1)} % of the offered deliveries arrived`;
  }
  if (st.response_time_p95_ms > LEVEL_LATE_FACTOR * slo) {
    return `response time p95 ${st.response_time_p95_ms.toFixed(1)} ms, over ${LEVEL_LATE_FACTOR} × ${slo} ms`;
  }
  return level.chatsPerSecond > 0 && st.chats_intended === 0 ? 'no chats intended' : '';
}

/** Reads each hold as it ends and stops the test at the first level that ends the point. */
export function monitor() {
  schedule();
  levels.forEach((level, i) => {
    if (i === levels.length - 1) return; // the last level ends the point anyway
    const wait = scenarioClock(level.to) + 700 - Date.now(); // the hold's last flushes
    if (wait > 0) sleep(wait / 1000);
    const why = ended(chat.stepStats(i), level);
    if (why !== '') exec.test.abort(`level ${i + 1} (${level.deliveriesPerSecond} deliveries/s) ended the point: ${why}`);
  });
}
