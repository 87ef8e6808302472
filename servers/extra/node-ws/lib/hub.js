// hub.js owns the open connections, the joined members and every broadcast; and Member,
// one connection's protocol state and its bounded outbound queue.
'use strict';

const { Limiter } = require('./limiter');
const protocol = require('./protocol');

// Messages a connection may have queued before further ones are dropped (dropped_slow).
const QUEUE_SIZE = 256;
const CLOSE_NORMAL = 1000; // after a leave
const CLOSE_GOING_AWAY = 1001; // on shutdown

class Hub {
  constructor(stats) {
    this.stats = stats;
    this.clients = new Set(); // every open connection, so shutdown reaches all
    this.members = new Set(); // the joined ones, who receive broadcasts
    this.closed = false; // set by shutdown; later connections are refused
  }

  // Adds an open connection; false once the hub is shutting down.
  register(member) {
    if (this.closed) return false;
    this.clients.add(member);
    return true;
  }

  // Takes a closed connection out, broadcasting its leave if it was a member.
  unregister(member) {
    this.leave(member);
    this.clients.delete(member);
  }

  join(member) {
    this.members.add(member);
    this.fanOut({ data: protocol.encodeJoin(member.user, this.members.size), chat: false }, null);
    this.stats.joins++;
  }

  leave(member) {
    if (!this.members.delete(member)) return;
    this.fanOut({ data: protocol.encodeLeave(member.user, this.members.size), chat: false }, null);
  }

  chat(from, text, ts) {
    this.fanOut({ data: protocol.encodeChat(from.user, text, ts), chat: true }, from);
  }

  // Hands one serialized message to every member but `skip`, never waiting on any.
  fanOut(out, skip) {
    for (const m of this.members) {
      if (m !== skip && !m.offer(out)) this.stats.dropped_slow++;
    }
  }

  // Refuses new connections and closes every open one with `code`.
  shutdown(code = CLOSE_GOING_AWAY) {
    this.closed = true;
    for (const m of [...this.clients]) m.close(code);
  }
}

const FRESH = 0; // connected, not joined
const JOINED = 1; // a member: receives broadcasts
const LEFT = 2; // sent leave; its connection is closing

// One connection's protocol state. `transport` is what the client gives it:
// send(bytes, done) queues one text frame and calls done(err) once it is written;
// close(code) starts the close handshake.
class Member {
  constructor(hub, transport, limiter = new Limiter()) {
    this.hub = hub;
    this.transport = transport;
    this.limiter = limiter;
    this.state = FRESH;
    this.user = '';
    this.queued = 0; // messages handed to the socket and not yet written
    this.closing = false;
  }

  // Queues one message unless 256 are already waiting; false means dropped.
  offer(out) {
    if (this.closing || this.queued >= QUEUE_SIZE) return false;
    this.queued++;
    this.transport.send(out.data, (err) => {
      this.queued--;
      if (!err && out.chat) this.hub.stats.deliveries++;
    });
    return true;
  }

  close(code) {
    if (this.closing) return;
    this.closing = true;
    this.transport.close(code);
  }

  // Applies one text frame's message.
  handle(text) {
    const stats = this.hub.stats;
    const msg = protocol.parseInbound(text);
    if (msg === null) {
      stats.malformed++;
      return;
    }
    switch (msg.kind) {
      case 'ping':
        if (!this.offer({ data: protocol.encodePong(msg.ts), chat: false })) stats.dropped_slow++;
        return;
      case 'join':
        if (this.state === FRESH) {
          this.user = msg.user;
          this.state = JOINED;
          this.hub.join(this);
        }
        return;
      case 'chat':
        if (this.state !== JOINED) {
          stats.malformed++;
          return;
        }
        stats.chat_in++;
        if (!this.limiter.allow()) {
          stats.dropped_ratelimit++;
          return;
        }
        stats.chat_accepted++;
        this.hub.chat(this, msg.text, msg.ts);
        return;
      case 'leave':
        if (this.state !== JOINED) {
          stats.malformed++;
          return;
        }
        this.state = LEFT;
        this.hub.leave(this);
        this.close(CLOSE_NORMAL);
        return;
    }
  }
}

module.exports = { Hub, Member, QUEUE_SIZE, CLOSE_NORMAL, CLOSE_GOING_AWAY };
