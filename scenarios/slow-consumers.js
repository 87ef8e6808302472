// slow-consumers: what clients that stop reading cost everyone else.
//
// Shape: one room ("public") of `clients` (quick: 300); ceil(clients ·
// slowShare) of them (the slow-share load parameter, SLOW_SHARE; default 0.1)
// are slow readers: they connect with a 4 KB receive buffer (SO_RCVBUF) and an
// Ethernet MSS, never chat, read normally through the baseline, stop reading
// for the slow phase and read again, as fast as they can, in the recovery.
// The others are healthy: they chat `chatsPerSecond` each from the end of the
// join period and read as fast as they can. Phases, from the scenario's
// start: `joinSeconds` in which everyone connects and joins, then
// `baselineSeconds`, `slowSeconds` and `recoverySeconds` (quick: 2, 10, 15,
// 15 s); chats stop 1 s before the end and everyone leaves at the end. One VU
// runs the slow clients, the others the healthy ones, 50 per VU. Native load
// path only.
//
// Measures: the healthy clients' latency p99 per second (report periods of
// 1 s) through the three phases: how much a server's slow consumers slow the
// others, and how fast it recovers; its memory per slow client; and what it
// does to the slow ones (/stats dropped_slow; report()'s "slow" object: how
// many it disconnected, and when). The slow clients' receipts and closes are
// counted apart from the healthy clients' (k6/x/chat's slow option).
import exec from 'k6/execution';
import chat from 'k6/x/chat';
import { GRACE_SECONDS, defineScenario, scenarioClock } from './lib/scenario.js';
import { QUIET_BEFORE_LEAVE_MS } from './lib/chat.js';
import { shapeOf } from './lib/modes.js';
import { nativeOnly, sessionBase, unique } from './lib/rooms.js';

/** A slow client's socket: a 4 KB receive buffer, and an MSS of 1460 (see k6-chat/README.md). */
const SLOW_SOCKET = { recvBufferBytes: 4096, maxSegmentBytes: 1460 };
/** Healthy clients per VU. */
const PER_VU = 50;

nativeOnly('slow-consumers');
const shape = shapeOf('slow-consumers');
const slowClients = Math.ceil(shape.clients * shape.slowShare);
const healthyClients = shape.clients - slowClients;
const healthyVUs = Math.ceil(healthyClients / PER_VU);
const totalSeconds = shape.joinSeconds + shape.baselineSeconds + shape.slowSeconds + shape.recoverySeconds;
if (healthyClients < 2) {
  throw new Error(
    `slow-consumers: ${shape.clients} clients with SLOW_SHARE ${shape.slowShare} leave ${healthyClients} healthy, and a room needs two to chat`,
  );
}

export const { options, setup, handleSummary } = defineScenario('slow-consumers', shape, {
  executor: 'per-vu-iterations',
  vus: 1 + healthyVUs,
  iterations: 1,
  maxDuration: `${totalSeconds + 5 + GRACE_SECONDS}s`,
});

/** Iteration 0 runs the slow clients; every other one up to PER_VU healthy ones. */
export default function () {
  const index = exec.scenario.iterationInTest;
  const slowFrom = scenarioClock(shape.joinSeconds + shape.baselineSeconds);
  const end = scenarioClock(totalSeconds);
  // One window per second, on the scenario's clock (the engine cuts the phases from startMs).
  chat.schedule({ periodMs: 1000, startMs: scenarioClock(0) });
  if (index === 0) {
    chat.session({
      ...sessionBase(),
      user: unique('k6-slow', 1),
      clients: slowClients,
      slow: { ...SLOW_SOCKET, pauseFromMs: slowFrom, pauseUntilMs: slowFrom + shape.slowSeconds * 1000 },
      leaveAt: end,
    });
    return;
  }
  const first = (index - 1) * PER_VU;
  chat.session({
    ...sessionBase(),
    user: unique('k6', index),
    clients: Math.min(PER_VU, healthyClients - first),
    // Silent through the join period, then chatsPerSecond each.
    chatsPerSecond: 0,
    rateChanges: [[scenarioClock(shape.joinSeconds), shape.chatsPerSecond]],
    stopChatAt: end - QUIET_BEFORE_LEAVE_MS,
    leaveAt: end,
  });
}
