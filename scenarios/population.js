// population: what a connected user costs, at a production-shaped population.
//
// Shape: `users` in rooms of `roomSize` (quick: 5,000 in rooms of 50), each
// sending a WebSocket ping every `pingSeconds` (25: socket.io's default) and a
// chat every `chatSeconds` (60), both from a random phase, with `churnPercent`
// of them a minute (1 %) leaving cleanly and joining again. The users come up
// in three levels inside this one point (a third, two thirds, all: see
// populationShape in lib/modes.js), each a ramp whose first half connects its
// new rooms at a bounded rate from `SOURCE_ADDRESSES` and a measured hold. One
// VU is one room, from the level that needs it to the end.
//
// Measures: per level, the server's memory (user space and kernel apart) and
// connections, so the orchestrator fits memory per user as the slope across
// the levels; at the full level, the server's CPU per 1,000 users and the
// latency p99 of chats and of pongs from their intended times; the load
// generator's own memory and CPU per user (docs/methodology.md, "The population").
// Native load path only.
import exec from 'k6/execution';
import chat from 'k6/x/chat';
import { scenarioClock } from './lib/scenario.js';
import { steppedScenario } from './lib/steps.js';
import { config } from './lib/config.js';
import { shapeOf } from './lib/modes.js';

const shape = { ...shapeOf('population'), periodMs: 1000 };
const stepped = steppedScenario('population', shape, 'hold');
const { stepTimes, schedule, joinStep, sleepUntil, totalSeconds } = stepped;
export const { options, setup, handleSummary } = stepped;

const sourceAddresses = (__ENV.SOURCE_ADDRESSES || '').split(',').filter((a) => a !== '');

/** One VU is one room of users, from the level that needs it to the end. */
export function room() {
  if (joinStep() < 0) return;
  chat.session({
    ...config.sampling,
    ...config.transport,
    url: config.wsUrl,
    user: `k6-${__VU}`,
    room: `pop-${exec.scenario.iterationInTest}`,
    clients: shape.roomSize,
    chatsPerSecond: 1 / shape.chatSeconds,
    pingEveryMs: shape.pingSeconds * 1000,
    churnPerMinute: shape.churnPercent / 100,
    ...(sourceAddresses.length > 0 ? { sourceAddresses } : {}),
    leaveAt: scenarioClock(totalSeconds),
  });
}

/** Stops the test at the first level whose users could not connect: the level reached is recorded. */
export function monitor() {
  schedule();
  for (let i = 0; i < shape.steps.length; i++) {
    sleepUntil(stepTimes(i).to + 700);
    const st = chat.stepStats(i);
    if (st.errors > 0) exec.test.abort(`level ${i + 1} (${shape.steps[i]} users): ${st.errors} client errors`);
  }
}
