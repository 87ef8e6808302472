// fanout: what the size of a room costs, at equal deliveries.
//
// Shape: `clients` split into rooms of `roomSize` (the room-size load
// parameter, ROOM_SIZE; quick: 1,000 clients in rooms of 10), the fixed-rate
// rooms shape of lib/rooms.js (fixedRateRooms): one VU per room, the rooms
// connecting over the first half of `rampSeconds`, everyone chatting through
// `holdSeconds`. Each client chats deliveriesPerSecond / (clients · (roomSize −
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
import { shapeOf } from './lib/modes.js';
import { fixedRateRooms } from './lib/rooms.js';

export const { options, setup, handleSummary, room } = fixedRateRooms('fanout', shapeOf('fanout'));
export default room;
