// Owns the stepped shapes (capacity, idle-capacity, population): rooms of `roomSize`
// clients, one VU per room, added step by step through `steps` clients, each
// step a `rampSeconds` ramp in which its new rooms connect and a
// `holdSeconds` hold; a one-VU monitor scenario beside them; and the step
// schedule k6/x/chat keeps its per-step figures by (chat.schedule).
import exec from 'k6/execution';
import { sleep } from 'k6';
import chat from 'k6/x/chat';
import { GRACE_SECONDS, defineScenario, scenarioClock } from './scenario.js';

/**
 * options, setup and handleSummary for the stepped scenario `name`, with its
 * rooms run by the script's `room` export and its monitor by `monitor`, and
 * the step helpers both use. `measured` is 'hold' when only the holds are
 * measured windows, 'step' when whole steps are.
 */
export function steppedScenario(name, shape, measured) {
  const stepSeconds = shape.rampSeconds + shape.holdSeconds;
  const totalSeconds = shape.steps.length * stepSeconds;
  const rooms = shape.steps.map((clients) => Math.ceil(clients / shape.roomSize));
  // The last step, the leave and its close, and grace.
  const maxDuration = `${totalSeconds + 5 + GRACE_SECONDS}s`;
  const base = defineScenario(name, shape, {
    executor: 'per-vu-iterations',
    exec: 'room',
    vus: rooms[rooms.length - 1],
    iterations: 1,
    maxDuration,
  });
  base.options.scenarios.monitor = { executor: 'per-vu-iterations', exec: 'monitor', vus: 1, iterations: 1, maxDuration };

  /** Epoch ms of step i's start, its hold's start and its end, on this scenario's clock. */
  const stepTimes = (i) => {
    const start = scenarioClock(i * stepSeconds);
    return { start, holdFrom: start + shape.rampSeconds * 1000, to: start + stepSeconds * 1000 };
  };

  /** Hands k6/x/chat the step schedule (every VU calls it; the first call counts). */
  const schedule = () => {
    chat.schedule({
      // One-second periods where the shape asks for them (the population: which errors
      // came while its levels ran, and which at the leave after them).
      ...(shape.periodMs ? { periodMs: shape.periodMs } : {}),
      steps: shape.steps.map((clients, i) => {
        const t = stepTimes(i);
        return { clients, fromMs: measured === 'hold' ? t.holdFrom : t.start, toMs: t.to };
      }),
    });
  };

  /**
   * This VU's room: the step that needs it, after sleeping until its start
   * (the new rooms of a step connect evenly over the first half of its ramp);
   * -1 when no step does. VU ids are shared with the monitor's scenario, so
   * the room's number is its iteration in this scenario, not __VU.
   */
  const joinStep = () => {
    schedule();
    const index = exec.scenario.iterationInTest;
    const step = rooms.findIndex((n) => n > index);
    if (step < 0) return -1;
    const firstNew = step === 0 ? 0 : rooms[step - 1];
    const t = stepTimes(step);
    const startAt = t.start + ((index - firstNew) / (rooms[step] - firstNew)) * shape.rampSeconds * 500;
    const wait = startAt - Date.now();
    if (wait > 0) sleep(wait / 1000);
    return step;
  };

  /** Sleeps until epoch ms `at`, if it is ahead. */
  const sleepUntil = (at) => {
    const wait = at - Date.now();
    if (wait > 0) sleep(wait / 1000);
  };

  return { ...base, stepTimes, schedule, joinStep, sleepUntil, totalSeconds };
}
