// saturation: more clients and more chats until something gives.
//
// Shape: VUs step up through `steps` clients (quick: 200 -> 500 -> 1,000),
// each step a `rampSeconds` ramp and a hold, then a ramp down to 0; 100 s in
// all. Every client sends `chatsPerSecond` chats (5/s, half the server's rate
// limit, so the limiter drops none) until 1 s before the ramp-down, and leaves
// at a random moment within it.
//
// Measures: where a server stops keeping up with the fan-out: every chat goes
// to every other member, up to 1,000 x 5 x 999 = ~5M deliveries/s. That is
// far beyond what k6 can receive (~15k messages/s per core), so at the top
// steps k6 is the bottleneck; the orchestrator tells the two apart by
// comparing the server's `deliveries` and `dropped_slow` with chat_received.
import { defineScenario, idleFrom, leaveTimeInRampDown, rampingVUs, scenarioClock } from './lib/scenario.js';
import { QUIET_BEFORE_LEAVE_MS, runSession } from './lib/chat.js';
import { shapeOf } from './lib/modes.js';

const shape = shapeOf('saturation');
const steps = shape.steps.flatMap((clients, i) => [
  { target: clients, duration: `${shape.rampSeconds}s` },
  { target: clients, duration: `${shape.holdSeconds[i]}s` },
]);
const rampDownAfterSeconds = shape.steps.length * shape.rampSeconds + shape.holdSeconds.reduce((a, b) => a + b, 0);

export const { options, setup, handleSummary } = defineScenario(
  'saturation',
  shape,
  rampingVUs(steps, shape.rampDownSeconds),
);

export default function (data) {
  const rampDownStart = scenarioClock(rampDownAfterSeconds);
  const stopChatAt = rampDownStart - QUIET_BEFORE_LEAVE_MS;
  // One session per client: a VU that has left stays out until the end.
  if (idleFrom(stopChatAt, rampDownStart + shape.rampDownSeconds * 1000)) return;
  runSession(data, {
    chatsPerSecond: shape.chatsPerSecond,
    stopChatAt,
    leaveAt: leaveTimeInRampDown(rampDownStart, shape.rampDownSeconds),
  });
}
