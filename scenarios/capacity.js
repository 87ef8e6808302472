// capacity: the most clients a server holds with chat latency p95 under a
// target (SLO_P95_MS, default 50), in one k6 run.
//
// Shape: rooms of `roomSize` clients (one VU runs one room, its clients in Go
// through k6/x/chat) connect step by step through `steps` clients (quick:
// 100 -> 200 -> 500 -> 1k -> 2k -> 5k -> 10k -> 20k). Each step is a
// `rampSeconds` ramp that connects its new rooms, then a `holdSeconds` hold
// that is measured. Each room is a real room of its own (`room-<n>`, n the
// VU's room number), and each client chats `memberChatsPerSecond` from its
// start to the end of the last hold: every member receives
// memberChatsPerSecond * (roomSize - 1) chats a second whatever the step, and
// the server's work grows with the clients, not with their square.
//
// The extension keeps a histogram and counters per hold (chat.schedule); at
// the end of each hold a monitor reads them and the server's /stats, and stops
// the test (exec.test.abort) when the step broke: p95 at or over the target,
// client errors, or drops of 0.1 % or more. The orchestrator then judges every
// step by the same rule plus the load generator's CPU (docs/methodology.md).
//
// Measures: per step, latency, deliveries, drops, errors and CPU; the largest
// step that held.
import exec from 'k6/execution';
import http from 'k6/http';
import chat from 'k6/x/chat';
import { scenarioClock } from './lib/scenario.js';
import { steppedScenario } from './lib/steps.js';
import { config } from './lib/config.js';
import { shapeOf } from './lib/modes.js';
import { sessionBase, unique } from './lib/rooms.js';

const shape = shapeOf('capacity');
const slo = sloP95Ms();
// How long after the last hold clients leave: the last chats reach everyone first.
const LEAVE_AFTER_MS = 1000;
const statsUrl = config.wsUrl.replace(/^ws/, 'http').replace(/\/ws$/, '/stats');

function sloP95Ms() {
  const raw = __ENV.SLO_P95_MS;
  if (raw === undefined || raw === '') return 50;
  const n = Number(raw);
  if (!(n > 0) || !Number.isFinite(n)) throw new Error(`SLO_P95_MS must be a positive number, got "${raw}"`);
  return n;
}

const stepped = steppedScenario('capacity', { ...shape, sloP95Ms: slo }, 'hold');
const { stepTimes, schedule, joinStep, sleepUntil, totalSeconds } = stepped;
export const { options, setup, handleSummary } = stepped;

/** One VU is one room of roomSize clients, from the step that needs it to the end. */
export function room() {
  if (joinStep() < 0) return;
  // Numbered as joinStep numbers rooms: this scenario's iteration, not __VU.
  const n = exec.scenario.iterationInTest + 1;
  // Chats go on to the end of the last hold; everyone leaves after it.
  const stopChatAt = scenarioClock(totalSeconds);
  chat.session({
    ...sessionBase(),
    user: unique('k6', n),
    clients: shape.roomSize,
    room: unique('room', n),
    chatsPerSecond: shape.memberChatsPerSecond,
    stopChatAt,
    leaveAt: stopChatAt + LEAVE_AFTER_MS,
  });
}

function serverStats() {
  const res = http.get(statsUrl, { timeout: '5s', tags: { name: 'stats' } });
  return res.status === 200 ? res.json() : null;
}

/** Why step i broke, or '' when it held (what k6 can see; the orchestrator adds CPU). */
function broken(st, before, after) {
  if (st.errors > 0) return `${st.errors} client errors`;
  if (st.latency_count === 0) return 'no chats received';
  if (st.latency_p95_ms >= slo) return `latency p95 ${st.latency_p95_ms.toFixed(1)} ms >= ${slo} ms`;
  if (before && after) {
    const slow = after.dropped_slow - before.dropped_slow;
    const delivered = after.deliveries - before.deliveries;
    const limited = after.dropped_ratelimit - before.dropped_ratelimit;
    const chatIn = after.chat_in - before.chat_in;
    if (slow > 0 && slow >= 0.001 * (delivered + slow)) return `${slow} slow-consumer drops`;
    if (limited > 0 && limited >= 0.001 * chatIn) return `${limited} rate-limit drops`;
  }
  return '';
}

/** Watches each hold and stops the test at the first step that broke. */
export function monitor() {
  schedule();
  for (let i = 0; i < shape.steps.length; i++) {
    const t = stepTimes(i);
    sleepUntil(t.holdFrom);
    const before = serverStats();
    sleepUntil(t.to + 700); // the last flushes of the hold
    const after = serverStats();
    const why = broken(chat.stepStats(i), before, after);
    if (why !== '') {
      exec.test.abort(`step ${i + 1} (${shape.steps[i]} clients) broke: ${why}`);
    }
  }
}
