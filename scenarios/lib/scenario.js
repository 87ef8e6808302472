// Owns what every script exports besides its default function: options with
// the shared thresholds and trend stats, setup(), and handleSummary. A script
// supplies only its scenario name, executor and client loop.
import exec from 'k6/execution';
import { sleep } from 'k6';
import { config } from './config.js';
import { calibrateClockBase } from './clock.js';
import { touchCounters } from './chat.js';
import { summaryFor } from './summary.js';

/**
 * How long k6 lets a session run past its executor's end (gracefulStop, and
 * on top of the ramp-down for gracefulRampDown) before cutting it off.
 * Sessions leave on their own before the end, so against a correct server
 * with k6 keeping up none of it is used; it is the room k6 needs to finish
 * closing when it is itself behind (the burst's join storm, saturation).
 */
export const GRACE_SECONDS = 10;

// Every number here must hold against a correct server, whatever the shape.
// A failed threshold makes k6 exit 99 but still runs handleSummary, so the
// orchestrator always gets its summary file.
const thresholds = {
  connect_errors: ['count==0'],
  abnormal_closes: ['count==0'],
  ws_errors: ['count==0'],
  chat_received: ['count>0'],
};

/**
 * options, setup and handleSummary for a script running the single scenario
 * `name` with `executor` (a k6 scenario object without `exec`). setup()'s
 * return value lands in the summary as `setup_data`, so each summary file
 * says which scenario, mode and shape produced it.
 */
export function defineScenario(name, shape, executor) {
  return {
    options: {
      scenarios: { [name]: executor },
      thresholds,
      summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(50)', 'p(95)', 'p(99)', 'count'],
    },
    setup() {
      touchCounters();
      return { scenario: name, mode: config.mode, shape, clockBaseMs: calibrateClockBase() };
    },
    handleSummary: summaryFor(name),
  };
}

/** Epoch ms at which the running scenario started, plus `seconds`. */
export function scenarioClock(seconds) {
  return exec.scenario.startTime + seconds * 1000;
}

/**
 * For shapes with one session per client: from epoch ms `lastStart` on, a VU
 * starts no session (it has left, or its session broke too late to rejoin)
 * and idles until `end` instead. Returns whether it idled.
 */
export function idleFrom(lastStart, end) {
  const now = Date.now();
  if (now < lastStart) return false;
  if (end > now) sleep((end - now) / 1000);
  return true;
}

/**
 * A ramping-vus executor through `stages`, then down to 0 in
 * `rampDownSeconds`. A VU dropped early in the ramp-down may still be
 * connected until its leave time later in it, so gracefulRampDown covers the
 * whole ramp-down.
 */
export function rampingVUs(stages, rampDownSeconds) {
  return {
    executor: 'ramping-vus',
    startVUs: 0,
    stages: [...stages, { target: 0, duration: `${rampDownSeconds}s` }],
    gracefulRampDown: `${rampDownSeconds + GRACE_SECONDS}s`,
    gracefulStop: `${GRACE_SECONDS}s`,
  };
}

/**
 * When a client of a ramping shape leaves: a random moment in the first 80%
 * of the ramp-down, so the room empties as the VU count falls and every close
 * is done before the ramp-down ends.
 */
export function leaveTimeInRampDown(rampDownStart, rampDownSeconds) {
  return rampDownStart + Math.random() * 0.8 * rampDownSeconds * 1000;
}
