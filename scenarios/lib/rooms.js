// Owns what the room scripts (fanout, load-curve, slow-consumers) share: they
// run their clients natively only (k6/x/chat's session options have no js
// twin), name users and rooms uniquely across the instances of a split run,
// pass the options every chat.session() call takes from the environment, and
// (fanout) run the fixed-rate rooms shape, which load-curve runs at levels of its own.
import exec from 'k6/execution';
import { sleep } from 'k6';
import chat from 'k6/x/chat';
import { config } from './config.js';
import { GRACE_SECONDS, defineScenario, scenarioClock } from './scenario.js';
import { QUIET_BEFORE_LEAVE_MS } from './chat.js';
import { fanoutChatsPerSecond } from './modes.js';

/** Stops a room script on the js load path, which has neither rooms nor slow readers. */
export function nativeOnly(name) {
  if (config.loadgen !== 'native') {
    throw new Error(`${name} runs on the native load path only (k6/x/chat); unset LOADGEN or set LOADGEN=native`);
  }
}

/** `<prefix>-<n>`, or `<prefix>-<instance>-<n>` in a split run (each instance numbers its VUs from 1). */
export function unique(prefix, n) {
  return config.instance > 0 ? `${prefix}-${config.instance}-${n}` : `${prefix}-${n}`;
}

/** chat.session() options from the environment: the server, latency probes, TLS and deflate. */
export function sessionBase() {
  const opts = { ...config.sampling, ...config.transport, url: config.wsUrl };
  if (config.instance > 0) opts.instance = config.instance;
  return opts;
}

/**
 * The fixed-rate rooms shape of fanout: `clients` split
 * into floor(clients / roomSize) rooms, one VU per room running its clients natively
 * (chat.session({clients: roomSize, room: 'room-<vu>'})). The rooms connect evenly over the
 * first half of `rampSeconds`, then everyone chats through `holdSeconds` on an open-loop
 * schedule of deliveriesPerSecond / (clients · (roomSize − 1)) chats per second each from
 * its start; chats stop 1 s before the end and everyone leaves at the end, as in steady. Returns the
 * script's exports: k6's options, setup and handleSummary, and the VU function.
 */
export function fixedRateRooms(name, shape) {
  nativeOnly(name);
  const rooms = Math.floor(shape.clients / shape.roomSize);
  const totalSeconds = shape.rampSeconds + shape.holdSeconds;
  const scenario = defineScenario(name, shape, {
    executor: 'per-vu-iterations',
    vus: rooms,
    iterations: 1,
    maxDuration: `${totalSeconds + 5 + GRACE_SECONDS}s`,
  });
  const chatsPerSecond = fanoutChatsPerSecond(shape);
  /** One VU is one room of roomSize clients, from its moment in the ramp to the end. */
  function room() {
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
      chatsPerSecond,
      stopChatAt: end - QUIET_BEFORE_LEAVE_MS,
      leaveAt: end,
    });
  }
  return { ...scenario, room };
}
