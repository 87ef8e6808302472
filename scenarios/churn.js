// churn: members constantly coming and going.
//
// Shape: `clients` VUs, each looping connect -> join -> chat once -> stay
// `staySeconds` -> leave, for `durationSeconds` (quick: 200 clients, 2 s stay,
// 60 s, about 100 sessions/s).
//
// Measures: the cost of a session's whole life: upgrade (ws_connecting),
// join, leave and close, and the hub updates under join/leave broadcasts. The
// one chat per session gives the delivery latency while the membership churns
// (chat_latency), which is where a hub's locking shows.
import { GRACE_SECONDS, defineScenario } from './lib/scenario.js';
import { runSession } from './lib/chat.js';
import { shapeOf } from './lib/modes.js';

const shape = shapeOf('churn');
export const { options, setup, handleSummary } = defineScenario('churn', shape, {
  executor: 'constant-vus',
  vus: shape.clients,
  duration: `${shape.durationSeconds}s`,
  // A session started just before the end still leaves on its own ~staySeconds later.
  gracefulStop: `${shape.staySeconds + GRACE_SECONDS}s`,
});

export default function (data) {
  runSession(data, {
    chats: 1,
    stayMs: shape.staySeconds * 1000,
  });
}
