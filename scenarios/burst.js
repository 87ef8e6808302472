// burst: a crowd arriving at once.
//
// Shape: VUs ramp 0 -> `clients` in `rampUpSeconds`, hold `holdSeconds`, and
// ramp down to 0 in `rampDownSeconds` (quick: 1,000 clients, 10 s / 5 s / 5 s).
// Each client connects, joins, sends one chat and stays connected until the
// ramp-down, leaving at a random moment within it, as the VU count falls.
//
// Measures: how fast a server accepts and upgrades connections (ws_connecting)
// and carries a join storm: every join is broadcast to every member, so N
// clients joining make ~N^2/2 join messages. The one chat per client gives a
// latency under that load.
import { defineScenario, idleFrom, leaveTimeInRampDown, rampingVUs, scenarioClock } from './lib/scenario.js';
import { runSession } from './lib/chat.js';
import { shapeOf } from './lib/modes.js';

const shape = shapeOf('burst');
export const { options, setup, handleSummary } = defineScenario(
  'burst',
  shape,
  rampingVUs(
    [
      { target: shape.clients, duration: `${shape.rampUpSeconds}s` },
      { target: shape.clients, duration: `${shape.holdSeconds}s` },
    ],
    shape.rampDownSeconds,
  ),
);

export default function (data) {
  const rampDownStart = scenarioClock(shape.rampUpSeconds + shape.holdSeconds);
  // One session per client: a VU that has left stays out until the end.
  if (idleFrom(rampDownStart, rampDownStart + shape.rampDownSeconds * 1000)) return;
  runSession(data, {
    chats: 1,
    leaveAt: leaveTimeInRampDown(rampDownStart, shape.rampDownSeconds),
  });
}
