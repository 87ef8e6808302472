// fanout: what the size of a room costs, at equal deliveries.
//
// Shape: `clients` split into rooms of `roomSize` (the room-size load
// parameter, ROOM_SIZE; quick: 1,000 clients in rooms of 10), floor(clients /
// roomSize) rooms, one VU per room running its clients natively
// (chat.session({clients: roomSize, room: 'room-<vu>'})). The rooms connect
// evenly over the first half of `rampSeconds`, then everyone chats through
// `holdSeconds`; chats stop 1 s before the end and everyone leaves at the end,
// as in steady. Each client chats deliveriesPerSecond / (clients · (roomSize −
// 1)) times a second from its start, so every room size asks the server for
// the same deliveries per second (quick: 8,000/s); roomSize 2 is the smallest
// the servers' rate limit of 10 chats/s allows at this many clients
// (lib/modes.js refuses a shape over it, and a room size above the clients).
// Native load path only.
//
// Measures: deliveries per second, deliveries per server CPU-second, latency
// p99 and memory, per room size (wscbench run --sweep room-size=2,10,100,1000):
// many small rooms (a broadcast to one peer, many chats to parse and
// rate-limit) against a few large ones (one parse, a long loop of writes).
import exec from 'k6/execution';
import { sleep } from 'k6';
import chat from 'k6/x/chat';
import { GRACE_SECONDS, defineScenario, scenarioClock } from './lib/scenario.js';
import { QUIET_BEFORE_LEAVE_MS } from './lib/chat.js';
import { fanoutChatsPerSecond, shapeOf } from './lib/modes.js';
import { nativeOnly, sessionBase, unique } from './lib/rooms.js';

nativeOnly('fanout');
const shape = shapeOf('fanout');
const rooms = Math.floor(shape.clients / shape.roomSize);
const totalSeconds = shape.rampSeconds + shape.holdSeconds;
export const { options, setup, handleSummary } = defineScenario('fanout', shape, {
  executor: 'per-vu-iterations',
  vus: rooms,
  iterations: 1,
  maxDuration: `${totalSeconds + 5 + GRACE_SECONDS}s`,
});

/** One VU is one room of roomSize clients, from its moment in the ramp to the end. */
export default function () {
  const index = exec.scenario.iterationInTest;
  const end = scenarioClock(totalSeconds);
  const startAt = scenarioClock((index / rooms) * shape.rampSeconds * 0.5);
  const wait = startAt - Date.now();
  if (wait > 0) sleep(wait / 1000);
  chat.session({
    ...sessionBase(),
    user: unique('k6', index + 1),
    clients: shape.roomSize,
    room: unique('room', index + 1),
    chatsPerSecond: fanoutChatsPerSecond(shape),
    stopChatAt: end - QUIET_BEFORE_LEAVE_MS,
    leaveAt: end,
  });
}
