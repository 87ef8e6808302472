// loadgen-capacity: how many frames k6 itself can receive, on either load path.
//
// Shape: `CLIENTS` VUs (default 50), each holding one connection to WS_URL
// for `SECONDS` (default 10) and only receiving: no chats, a leave at the end.
// Point WS_URL at the blaster (scenarios/k6-chat/cmd/blaster), which sends
// chat frames to every client as fast as it can or at --rate, and ignores the
// join and leave; clients close with 1000 two seconds after their leave.
//
// Measures: chat_received per CPU-second of k6 (the native report's
// process_cpu_ns), for LOADGEN=native and LOADGEN=js. MODE plays no part.
import { defineScenario, scenarioClock, GRACE_SECONDS } from './lib/scenario.js';
import { runSession } from './lib/chat.js';

function positiveInt(name, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

const shape = { clients: positiveInt('CLIENTS', 50), seconds: positiveInt('SECONDS', 10) };

export const { options, setup, handleSummary } = defineScenario('loadgen-capacity', shape, {
  executor: 'per-vu-iterations',
  vus: shape.clients,
  iterations: 1,
  // The leave, the 2 s wait after it (the blaster does not close on leave), and grace.
  maxDuration: `${shape.seconds + 2 + GRACE_SECONDS}s`,
});

export default function (data) {
  runSession(data, { leaveAt: scenarioClock(shape.seconds) });
}
