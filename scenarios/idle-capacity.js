// idle-capacity: how many joined clients that never chat a server holds under
// its memory limit, and what each costs.
//
// Shape: rooms of `roomSize` idle clients (one VU runs one room through
// k6/x/chat) connect step by step through `steps` clients (quick: 1k -> 2k ->
// 5k -> 10k -> 15k -> 20k -> 30k), each step a `rampSeconds` ramp and a
// `holdSeconds` hold. Clients join and then only read (every join is
// broadcast to the room) until the end. A monitor stops the test at the first
// hold with client errors (connects failing); the orchestrator stops it when
// the server's memory reaches 90 % of its limit.
//
// Measures: the most clients held (the server's connections_current) and the
// server's memory per client (the slope of its memory against connections).
import exec from 'k6/execution';
import chat from 'k6/x/chat';
import { scenarioClock } from './lib/scenario.js';
import { steppedScenario } from './lib/steps.js';
import { config } from './lib/config.js';
import { shapeOf } from './lib/modes.js';

const shape = shapeOf('idle-capacity');
const stepped = steppedScenario('idle-capacity', shape, 'step');
const { stepTimes, schedule, joinStep, sleepUntil, totalSeconds } = stepped;
// Idle clients receive no chats: every shared threshold but that one.
const { chat_received: _received, ...thresholds } = stepped.options.thresholds;
stepped.options.thresholds = thresholds;
export const { options, setup, handleSummary } = stepped;

/** One VU is one room of idle clients, from the step that needs it to the end. */
export function room() {
  if (joinStep() < 0) return;
  chat.session({
    ...config.sampling,
    ...config.transport,
    url: config.wsUrl,
    user: `k6-${__VU}`,
    clients: shape.roomSize,
    leaveAt: scenarioClock(totalSeconds),
  });
}

/** Stops the test at the first step whose clients saw errors. */
export function monitor() {
  schedule();
  for (let i = 0; i < shape.steps.length; i++) {
    sleepUntil(stepTimes(i).to + 700);
    const st = chat.stepStats(i);
    if (st.errors > 0) exec.test.abort(`step ${i + 1} (${shape.steps[i]} clients): ${st.errors} client errors`);
  }
}
