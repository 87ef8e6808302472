// Owns the size and timing of each shape in each MODE. Scripts read only
// their own row; README.md shows the same numbers as a table.
//
// smoke: every shape in 10 s or less with a tenth of the clients (tests, CI).
// quick: the benchmark's default: the seed's clients, rates and ramps with short holds,
//        because a run repeats every point in rounds (docs/methodology.md, "Rounds").
// seed:  the seed's exact lengths, one long pass per point.
// soak:  longer holds where length changes what is measured (steady, churn),
//        DURATION seconds when set (wscbench run --duration); burst, saturation and
//        capacity are defined by their ramps and steps, fanout and slow-consumers by
//        their phases, so soak = seed.
import { config } from './config.js';

const SHAPES = {
  steady: {
    smoke: { clients: 10, chatsPerSecond: 1, holdSeconds: 5 },
    quick: { clients: 100, chatsPerSecond: 1, holdSeconds: 5 },
    seed: { clients: 100, chatsPerSecond: 1, holdSeconds: 60 },
    soak: { clients: 100, chatsPerSecond: 1, holdSeconds: 300 },
  },
  burst: {
    smoke: { clients: 100, rampUpSeconds: 2, holdSeconds: 2, rampDownSeconds: 1 },
    quick: { clients: 1000, rampUpSeconds: 8, holdSeconds: 2, rampDownSeconds: 1 },
    seed: { clients: 1000, rampUpSeconds: 10, holdSeconds: 5, rampDownSeconds: 5 },
  },
  churn: {
    smoke: { clients: 20, durationSeconds: 5, staySeconds: 2 },
    quick: { clients: 200, durationSeconds: 7, staySeconds: 2 },
    seed: { clients: 200, durationSeconds: 60, staySeconds: 2 },
    soak: { clients: 200, durationSeconds: 180, staySeconds: 2 },
  },
  saturation: {
    // One ramp and one hold per step, then one ramp down to 0.
    smoke: { steps: [20, 50, 100], chatsPerSecond: 5, rampSeconds: 1, holdSeconds: [1, 1, 2], rampDownSeconds: 1 },
    quick: { steps: [200, 500, 1000], chatsPerSecond: 5, rampSeconds: 3, holdSeconds: [2, 2, 3], rampDownSeconds: 1 },
    seed: { steps: [200, 500, 1000], chatsPerSecond: 5, rampSeconds: 5, holdSeconds: [25, 25, 30], rampDownSeconds: 5 },
  },
  capacity: {
    // Each step: a ramp that connects the new rooms, then a hold that is measured.
    smoke: { roomSize: 50, memberChatsPerSecond: 1, steps: [50, 100, 200], rampSeconds: 2, holdSeconds: 4 },
    quick: {
      roomSize: 50,
      memberChatsPerSecond: 1,
      steps: [100, 200, 500, 1000, 2000, 5000, 10000, 20000],
      rampSeconds: 10,
      holdSeconds: 20,
    },
  },
  'idle-capacity': {
    // Idle joined clients in rooms of 50, stepped up; a step's new rooms connect evenly over
    // the first half of its ramp (quick: 1,000 to 3,333 connects/s); the orchestrator
    // ends the run when the server's memory nears its limit.
    smoke: { roomSize: 50, steps: [1000, 2000, 3000], rampSeconds: 2, holdSeconds: 2 },
    quick: { roomSize: 50, steps: [10000, 25000, 50000, 100000, 150000, 200000], rampSeconds: 30, holdSeconds: 10 },
  },
  population: {
    // `users` in rooms of `roomSize`, each pinging every `pingSeconds`, chatting every
    // `chatSeconds` and `churnPercent` of them leaving and joining again each minute,
    // brought up in three levels (a third, two thirds, all) inside one point: each level a
    // ramp whose first half connects its new rooms at up to `connectsPerSecond`, then a
    // measured hold. populationShape() derives the levels and the ramp.
    smoke: {
      users: 300,
      roomSize: 50,
      pingSeconds: 25,
      chatSeconds: 60,
      churnPercent: 1,
      connectsPerSecond: 2000,
      holdSeconds: 2,
    },
    quick: {
      users: 5000,
      roomSize: 50,
      pingSeconds: 25,
      chatSeconds: 60,
      churnPercent: 1,
      connectsPerSecond: 2000,
      holdSeconds: 3,
    },
    seed: {
      users: 5000,
      roomSize: 50,
      pingSeconds: 25,
      chatSeconds: 60,
      churnPercent: 1,
      connectsPerSecond: 2000,
      holdSeconds: 30,
    },
  },
  fanout: {
    // `clients` in rooms of `roomSize`, one VU per room; each client chats
    // deliveriesPerSecond / (clients * (roomSize - 1)) per second, so every room size
    // asks the same deliveries per second of the server.
    smoke: { clients: 100, roomSize: 10, deliveriesPerSecond: 800, rampSeconds: 2, holdSeconds: 6 },
    quick: { clients: 1000, roomSize: 10, deliveriesPerSecond: 8000, rampSeconds: 5, holdSeconds: 15 },
  },
  'slow-consumers': {
    // One room of `clients`; ceil(clients * slowShare) of them are slow readers. After
    // joinSeconds: a baseline, a slow phase in which the slow ones stop reading, and a
    // recovery in which they read again.
    smoke: {
      clients: 40,
      slowShare: 0.1,
      chatsPerSecond: 2,
      joinSeconds: 1,
      baselineSeconds: 3,
      slowSeconds: 3,
      recoverySeconds: 3,
    },
    quick: {
      clients: 300,
      slowShare: 0.1,
      chatsPerSecond: 3,
      joinSeconds: 2,
      baselineSeconds: 10,
      slowSeconds: 15,
      recoverySeconds: 15,
    },
  },
  'load-curve': {
    // `clients` in rooms of `roomSize` (one room by default), offered each of `steps`
    // deliveries per second in turn, as levels inside one point (DELIVERIES: the levels,
    // comma-separated; without it the curve's own): one join ramp, then per level a
    // `settleSeconds` rate change and a measured `holdSeconds` hold (loadCurveLevels).
    // docs/methodology.md, "The load curve", says how levels and holds were chosen.
    smoke: { clients: 50, roomSize: 50, steps: [2450, 9800], rampSeconds: 2, settleSeconds: 1, holdSeconds: 2 },
    quick: {
      clients: 500,
      roomSize: 500,
      steps: [50000, 100000, 200000, 400000],
      rampSeconds: 2,
      settleSeconds: 1,
      holdSeconds: 3,
    },
  },
};

/** Every load parameter a sweep can set (LoadParam in crates/wscbench-results/src/dimensions.rs; a test in crates/wscbench-engine/src/load/scenarios.rs checks the two agree). */
export const LOAD_PARAMS = ['clients', 'rate', 'room-size', 'slow-share', 'deliveries', 'users', 'ping-s', 'chat-s', 'churn'];

/**
 * The load parameters each shape takes, and how each changes it. A swept
 * shape runs exactly as long as the plain one, so the orchestrator's timings
 * hold: saturation with CLIENTS holds that one level of clients for the time
 * its steps took (one ramp, then the rest as one hold).
 */
const OVERRIDES = {
  steady: {
    clients: (shape, n) => ({ ...shape, clients: n }),
    rate: (shape, r) => ({ ...shape, chatsPerSecond: r }),
  },
  burst: {
    clients: (shape, n) => ({ ...shape, clients: n }),
  },
  churn: {
    clients: (shape, n) => ({ ...shape, clients: n }),
  },
  saturation: {
    clients: (shape, n) => ({
      ...shape,
      steps: [n],
      holdSeconds: [
        shape.holdSeconds.reduce((a, b) => a + b, 0) + (shape.steps.length - 1) * shape.rampSeconds,
      ],
    }),
    rate: (shape, r) => ({ ...shape, chatsPerSecond: r }),
  },
  // Stepped by design: their steps are the knob.
  capacity: {},
  'idle-capacity': {},
  population: {
    users: (shape, n) => ({ ...shape, users: n }),
    'room-size': (shape, s) => ({ ...shape, roomSize: s }),
    'ping-s': (shape, s) => ({ ...shape, pingSeconds: s }),
    'chat-s': (shape, s) => ({ ...shape, chatSeconds: s }),
    churn: (shape, c) => ({ ...shape, churnPercent: c }),
  },
  fanout: {
    clients: (shape, n) => ({ ...shape, clients: n }),
    'room-size': (shape, s) => ({ ...shape, roomSize: s }),
  },
  'slow-consumers': {
    clients: (shape, n) => ({ ...shape, clients: n }),
    'slow-share': (shape, s) => ({ ...shape, slowShare: s }),
  },
  // One room stays one room when only the clients change (roomSize follows clients).
  'load-curve': {
    deliveries: (shape, levels) => ({ ...shape, steps: levels }),
    clients: (shape, n) => ({
      ...shape,
      clients: n,
      roomSize: shape.roomSize === shape.clients && !('room-size' in config.loadParams) ? n : shape.roomSize,
    }),
    'room-size': (shape, s) => ({ ...shape, roomSize: s }),
  },
};

/** The servers' rate limit: chats per second one connection may send (docs/protocol.md). */
export const RATE_LIMIT = 10;

/** Checks a shape can run as asked, once its load parameters are applied. */
const CHECKS = {
  fanout: (shape) => checkRooms('fanout', shape),
  'load-curve': (shape) => shape.steps.forEach((d) => checkRooms('load-curve', { ...shape, deliveriesPerSecond: d })),
  population: (shape) => {
    if (shape.roomSize > shape.users) {
      throw new Error(`population: ROOM_SIZE ${shape.roomSize} is larger than the ${shape.users} users`);
    }
  },
};

/** The population's levels inside one point: a third, two thirds and all of its users. */
export const POPULATION_LEVELS = [1 / 3, 2 / 3, 1];

/**
 * The population shape with its levels: `steps`, each level's users in whole rooms (at least
 * one room more than the level before), and `rampSeconds`, twice the seconds the largest
 * level's new users take to connect at `connectsPerSecond` (the first half connects, the
 * second lets the server settle), at least 2. crates/wscbench-engine/src/load/scenarios.rs
 * computes the same (a test checks).
 */
export function populationShape(shape) {
  const rooms = Math.max(1, Math.round(shape.users / shape.roomSize));
  const steps = [];
  let before = 0;
  for (const share of POPULATION_LEVELS) {
    const level = Math.max(before + 1, Math.round(rooms * share));
    steps.push(Math.min(level, rooms) * shape.roomSize);
    before = level;
  }
  let newest = 0;
  steps.forEach((n, i) => {
    newest = Math.max(newest, n - (i === 0 ? 0 : steps[i - 1]));
  });
  const rampSeconds = Math.max(2, 2 * Math.ceil(newest / shape.connectsPerSecond));
  return { ...shape, steps, rampSeconds };
}

/**
 * The load curve's levels inside its one point, in seconds from the scenario's start: the
 * join ramp, then per level a rate change at `start` that settles until `holdFrom`, and the
 * measured hold to `to`; chats stop at `chatsEnd`, a settle after the last hold, and a
 * quiet second later everyone leaves at `end`. crates/wscbench-engine/src/load/scenarios.rs computes the same (a test checks).
 */
export function loadCurveLevels(shape) {
  const levelSeconds = shape.settleSeconds + shape.holdSeconds;
  const levels = shape.steps.map((deliveriesPerSecond, i) => {
    const start = shape.rampSeconds + i * levelSeconds;
    return {
      deliveriesPerSecond,
      chatsPerSecond: fanoutChatsPerSecond({ ...shape, deliveriesPerSecond }),
      start,
      holdFrom: start + shape.settleSeconds,
      to: start + levelSeconds,
    };
  });
  // The last level's rate runs on for a settle after its hold, as every other level's is
  // followed by the next: chats stopping at a hold's end leave its last receipts out of it.
  const chatsEnd = shape.rampSeconds + shape.steps.length * levelSeconds + shape.settleSeconds;
  return { levels, chatsEnd, end: chatsEnd + QUIET_SECONDS };
}

/** The quiet second between the last chat and the leave (QUIET_BEFORE_LEAVE_MS in chat.js). */
const QUIET_SECONDS = 1;

/** Rooms no larger than the clients, each client within the servers' rate limit. */
function checkRooms(name, shape) {
  const { clients, roomSize, deliveriesPerSecond } = shape;
  if (roomSize > clients) {
    throw new Error(
      `${name}: ROOM_SIZE ${roomSize} is larger than the ${clients} clients: no room at all; use room sizes up to ${clients} or more CLIENTS`,
    );
  }
  const rate = fanoutChatsPerSecond(shape);
  if (rate > RATE_LIMIT) {
    throw new Error(
      `${name}: ${clients} clients in rooms of ${roomSize} need ${rate.toFixed(1)} chats per second per client for ${deliveriesPerSecond} deliveries/s, over the servers' limit of ${RATE_LIMIT}; use more clients or larger rooms`,
    );
  }
}

/** What each fanout client chats per second: deliveriesPerSecond / (clients * (roomSize - 1)). */
export function fanoutChatsPerSecond({ clients, roomSize, deliveriesPerSecond }) {
  return deliveriesPerSecond / (clients * (roomSize - 1));
}

/** A load parameter's environment variable: upper case, '-' as '_' (room-size: ROOM_SIZE). */
export function envName(key) {
  return key.toUpperCase().replace(/-/g, '_');
}

/** Which load parameters each scenario takes; the orchestrator checks a sweep against it. */
export const SWEEP_KEYS = Object.fromEntries(
  Object.entries(OVERRIDES).map(([name, keys]) => [name, Object.keys(keys)]),
);

// The length soak gives each shape that has one, when DURATION is set.
const SOAK_LENGTH = { steady: 'holdSeconds', churn: 'durationSeconds' };

function soakSeconds() {
  const raw = __ENV.DURATION;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 10) throw new Error(`DURATION must be whole seconds >= 10, got "${raw}"`);
  return n;
}

/**
 * The shape of scenario `name` in the current MODE (soak falls back to seed, then quick),
 * with soak's DURATION and the load parameters given in the environment applied.
 */
export function shapeOf(name) {
  const rows = SHAPES[name];
  if (!rows) throw new Error(`no shape named ${name} (known: ${Object.keys(SHAPES).join(', ')})`);
  let shape = { ...(rows[config.mode] || rows.seed || rows.quick) };
  const seconds = config.mode === 'soak' ? soakSeconds() : undefined;
  if (seconds !== undefined && SOAK_LENGTH[name]) shape[SOAK_LENGTH[name]] = seconds;
  for (const [key, value] of Object.entries(config.loadParams)) {
    const apply = OVERRIDES[name][key];
    if (!apply) {
      throw new Error(
        `${name} does not take ${envName(key)} (it takes ${SWEEP_KEYS[name].map(envName).join(', ') || 'none'})`,
      );
    }
    shape = apply(shape, value);
  }
  if (CHECKS[name]) CHECKS[name](shape);
  if (name === 'population') shape = populationShape(shape);
  return shape;
}
