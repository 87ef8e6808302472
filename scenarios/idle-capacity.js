// idle-capacity: how many joined clients that never chat a server holds under
// its memory limit, and what each costs at rest.
//
// Shape: rooms of `roomSize` idle clients, each room its own (one VU runs one
// room through k6/x/chat), connect step by step through `steps` clients
// (quick: 10k -> 25k -> 50k -> 100k -> 150k -> 200k), each step a
// `rampSeconds` ramp whose first half paces its new rooms' connects evenly and
// a `holdSeconds` hold. Clients join and then only read until the end. A join
// is broadcast to its own room only, so a step's joins put about roomSize / 2
// frames per client through the server (no storm), and what a client costs is
// what it costs at rest. The clients connect from `SOURCE_ADDRESSES` (a comma
// list the orchestrator computes from the largest step: one source address
// has about 28,000 ports per destination). A monitor stops the test at the
// first step with client errors (connects failing); the orchestrator stops it
// when the server's memory reaches 90 % of its limit.
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

// The orchestrator's list; k6/x/chat's own default when it gives none.
const sourceAddresses = (__ENV.SOURCE_ADDRESSES || '').split(',').filter((a) => a !== '');

/** One VU is one room of idle clients, from the step that needs it to the end. */
export function room() {
  if (joinStep() < 0) return;
  chat.session({
    ...config.sampling,
    ...config.transport,
    url: config.wsUrl,
    user: `k6-${__VU}`,
    room: `idle-${exec.scenario.iterationInTest}`,
    clients: shape.roomSize,
    ...(sourceAddresses.length > 0 ? { sourceAddresses } : {}),
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
