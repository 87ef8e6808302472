// steady: a fixed room of clients chatting at a constant, modest rate.
//
// Shape: `clients` VUs connect at once, join, and each sends
// `chatsPerSecond` chats for `holdSeconds` (quick: 100 clients, 1 chat/s,
// 60 s); chats stop 1 s before the end and everyone leaves together at the end.
// One session per client for the whole hold, so no join/leave traffic in between.
//
// Measures: delivery latency (chat_latency) and throughput (chat_received)
// at a load every server should carry easily: the baseline.
import { GRACE_SECONDS, defineScenario, idleFrom, scenarioClock } from './lib/scenario.js';
import { QUIET_BEFORE_LEAVE_MS, runSession } from './lib/chat.js';
import { shapeOf } from './lib/modes.js';

const shape = shapeOf('steady');
export const { options, setup, handleSummary } = defineScenario('steady', shape, {
  executor: 'constant-vus',
  vus: shape.clients,
  duration: `${shape.holdSeconds}s`,
  gracefulStop: `${GRACE_SECONDS}s`,
});

export default function (data) {
  const end = scenarioClock(shape.holdSeconds);
  // Only a client whose session broke early gets here again; it rejoins for
  // the rest of the hold if that is long enough to chat at all.
  if (idleFrom(end - 2 * QUIET_BEFORE_LEAVE_MS, end)) return;
  runSession(data, {
    chatsPerSecond: shape.chatsPerSecond,
    stopChatAt: end - QUIET_BEFORE_LEAVE_MS,
    leaveAt: end,
  });
}
