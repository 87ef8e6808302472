// stats.js owns the cumulative counters of docs/protocol.md's /stats and their JSON.
// Node runs the server on one thread, so plain numbers are the atomics here.
'use strict';

class Stats {
  constructor(server) {
    this.server = server;
    this.started = Date.now();
    this.connections_current = 0;
    this.connections_total = 0;
    this.joins = 0;
    this.frames_in = 0;
    this.chat_in = 0;
    this.chat_accepted = 0;
    this.deliveries = 0;
    this.dropped_ratelimit = 0;
    this.dropped_slow = 0;
    this.malformed = 0;
  }

  // The /stats object, in the protocol's field order.
  json() {
    return JSON.stringify({
      server: this.server,
      uptime_ms: Date.now() - this.started,
      connections_current: this.connections_current,
      connections_total: this.connections_total,
      joins: this.joins,
      frames_in: this.frames_in,
      chat_in: this.chat_in,
      chat_accepted: this.chat_accepted,
      deliveries: this.deliveries,
      dropped_ratelimit: this.dropped_ratelimit,
      dropped_slow: this.dropped_slow,
      malformed: this.malformed,
    });
  }
}

module.exports = { Stats };
