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
import { sleep } from 'k6';
import chat from 'k6/x/chat';
import { GRACE_SECONDS, defineScenario, scenarioClock } from './lib/scenario.js';
import { config } from './lib/config.js';
import { shapeOf } from './lib/modes.js';

const shape = shapeOf('idle-capacity');
const stepSeconds = shape.rampSeconds + shape.holdSeconds;
const totalSeconds = shape.steps.length * stepSeconds;
const rooms = shape.steps.map((clients) => Math.ceil(clients / shape.roomSize));

const base = defineScenario('idle-capacity', shape, {
  executor: 'per-vu-iterations',
  exec: 'room',
  vus: rooms[rooms.length - 1],
  iterations: 1,
  maxDuration: `${totalSeconds + 5 + GRACE_SECONDS}s`,
});
base.options.scenarios.monitor = {
  executor: 'per-vu-iterations',
  exec: 'monitor',
  vus: 1,
  iterations: 1,
  maxDuration: `${totalSeconds + 5 + GRACE_SECONDS}s`,
};
// Idle clients receive no chats.
delete base.options.thresholds.chat_received;
export const { options, setup, handleSummary } = base;

function stepTimes(i) {
  const start = scenarioClock(i * stepSeconds);
  return { start, holdFrom: start + shape.rampSeconds * 1000, to: start + stepSeconds * 1000 };
}

function schedule() {
  chat.schedule({
    steps: shape.steps.map((clients, i) => ({ clients, fromMs: stepTimes(i).start, toMs: stepTimes(i).to })),
  });
}

/** One VU is one room of idle clients, from the step that needs it to the end. */
export function room() {
  schedule();
  // The room's number within this scenario: VU ids are shared with the monitor's
  // scenario, so __VU is not 1..rooms here.
  const index = exec.scenario.iterationInTest;
  const step = rooms.findIndex((n) => n > index);
  if (step < 0) return;
  const firstNew = step === 0 ? 0 : rooms[step - 1];
  const t = stepTimes(step);
  const startAt = t.start + ((index - firstNew) / (rooms[step] - firstNew)) * shape.rampSeconds * 500;
  const wait = startAt - Date.now();
  if (wait > 0) sleep(wait / 1000);
  chat.session({
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
    const untilEnd = stepTimes(i).to + 700 - Date.now();
    if (untilEnd > 0) sleep(untilEnd / 1000);
    const st = chat.stepStats(i);
    if (st.errors > 0) exec.test.abort(`step ${i + 1} (${shape.steps[i]} clients): ${st.errors} client errors`);
  }
}
