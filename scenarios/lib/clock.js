// Owns the timestamp every chat carries in `ts`, and the latency taken from it.
//
// Date.now() has whole-millisecond resolution, and on loopback a delivery takes
// well under a millisecond, so latencies would come out as 0 or 1. k6 has no
// performance.now(), but exec.instance.currentTestRunDuration is a float in ms
// with nanosecond resolution. setup() pins one epoch offset for it and hands
// it to every VU, so all clients stamp `ts` on the same clock: epoch
// milliseconds, like Date.now(), with microsecond resolution.
import exec from 'k6/execution';

/**
 * Epoch ms at which the test run started, to a few microseconds. Date.now()
 * truncates, so (Date.now() - elapsed) is the start minus the fraction of the
 * current millisecond. Read right after Date.now() ticks, that fraction is
 * ~0; the best of ten ticks rides out a preemption or two.
 */
export function calibrateClockBase() {
  let base = -Infinity;
  for (let tick = 0; tick < 10; tick++) {
    const last = Date.now();
    let now = last;
    while (now === last) now = Date.now();
    const candidate = now - exec.instance.currentTestRunDuration;
    if (candidate > base) base = candidate;
  }
  return base;
}

/** Epoch ms now, on the clock `calibrateClockBase` pinned. */
export function clockNow(base) {
  return base + exec.instance.currentTestRunDuration;
}
