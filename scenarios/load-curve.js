// load-curve: what a delivery costs, and how late it arrives, at one step of
// offered load.
//
// Shape: one step of the curve per run: `clients` in rooms of `roomSize`
// (quick: one room of 500) offered DELIVERIES deliveries per second on an
// open-loop schedule (the fixed-rate rooms shape of lib/rooms.js, as fanout):
// each client chats DELIVERIES / (clients · (roomSize − 1)) times a second from
// intended times, so a server that falls behind shows it in latency, never by
// slowing its clients down. The rooms join during the ramp and nobody chats
// until the hold: a room's join storm is no step's load. The orchestrator runs one point per step
// (quick: 50k, 100k, 200k and 400k deliveries/s; --sweep deliveries=...).
// Native load path only.
//
// Measures: per step, the share of the offered deliveries that arrived,
// latency p50/p99 from intended times, deliveries per server CPU-second (its
// inverse: CPU per 1,000 deliveries), memory and k6's own CPU; the report
// reads the steps together (docs/methodology.md, "The load curve").
import { shapeOf } from './lib/modes.js';
import { fixedRateRooms } from './lib/rooms.js';

export const { options, setup, handleSummary, room } = fixedRateRooms('load-curve', shapeOf('load-curve'), {
  chatFromHold: true,
});
export default room;
