// Owns what the room scripts (fanout, slow-consumers) share: they run their
// clients natively only (k6/x/chat's session options have no js twin), name
// users and rooms uniquely across the instances of a split run, and pass the
// options every chat.session() call takes from the environment.
import { config } from './config.js';

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
