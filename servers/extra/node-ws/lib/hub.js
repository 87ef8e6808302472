// hub.js owns the open connections, the rooms and their members, and every broadcast; and
// Member, one connection's protocol state (its name, its rooms) and its bounded outbound queue.
'use strict';

const { Limiter } = require('./limiter');
const protocol = require('./protocol');

// Messages a connection may have queued before further ones are dropped (dropped_slow).
const QUEUE_SIZE = 256;
// Rooms one connection may be in at once; a join to one more is malformed.
const MAX_ROOMS = 16;
const CLOSE_NORMAL = 1000; // after a leave without room
const CLOSE_GOING_AWAY = 1001; // on shutdown

class Hub {
  constructor(stats) {
    this.stats = stats;
    this.clients = new Set(); // every open connection, so shutdown reaches all
    this.rooms = new Map(); // room name -> Set of its members; an emptied room is deleted
    this.closed = false; // set by shutdown; later connections are refused
  }

  // Adds an open connection; false once the hub is shutting down.
  register(member) {
    if (this.closed) return false;
    this.clients.add(member);
    return true;
  }

  // Takes a closed connection out, broadcasting its leave in every room it was in.
  unregister(member) {
    this.leaveAll(member);
    this.clients.delete(member);
  }

  join(member, room) {
    let members = this.rooms.get(room);
    if (!members) {
      members = new Set();
      this.rooms.set(room, members);
    }
    members.add(member);
    member.rooms.add(room);
    const out = { data: protocol.encodeJoin(room, member.user, members.size), chat: false };
    this.fanOut(members, out, null);
    this.stats.joins++;
  }

  // Takes `member` out of `room`, telling the room's remaining members.
  leave(member, room) {
    const members = this.rooms.get(room);
    member.rooms.delete(room);
    if (!members || !members.delete(member)) return;
    if (members.size === 0) this.rooms.delete(room);
    const out = { data: protocol.encodeLeave(room, member.user, members.size), chat: false };
    this.fanOut(members, out, null);
  }

  leaveAll(member) {
    for (const room of [...member.rooms]) this.leave(member, room);
  }

  chat(from, room, text, ts) {
    const members = this.rooms.get(room);
    if (members) this.fanOut(members, { data: protocol.encodeChat(room, from.user, text, ts), chat: true }, from);
  }

  // Hands one serialized message to every member of a room but `skip`, never waiting on any.
  fanOut(members, out, skip) {
    for (const m of members) {
      if (m !== skip && !m.offer(out)) this.stats.dropped_slow++;
    }
  }

// Refuses new connections and closes every open one with `code`.
  shutdown(code = CLOSE_GOING_AWAY) {
    this.closed = true;
    for (const m of [...this.clients]) m.close(code);
  }
}

// One connection's protocol state. `transport` is what the client gives it:
// send(bytes, done) queues one text frame and calls done(err) once it is written;
// close(code) starts the close handshake.
class Member {
  constructor(hub, transport, limiter = new Limiter()) {
    this.hub = hub;
    this.transport = transport;
    this.limiter = limiter;
    this.user = ''; // set by the first successful join, kept for life
    this.rooms = new Set(); // the rooms it is in: it receives their broadcasts
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
        if (this.rooms.has(msg.room)) return; // a second join to a room: ignored
        if (this.rooms.size >= MAX_ROOMS) {
          stats.malformed++;
          return;
        }
        if (this.user === '') this.user = msg.user;
        this.hub.join(this, msg.room);
        return;
      case 'chat':
        if (!this.rooms.has(msg.room)) {
          stats.malformed++;
          return;
        }
        stats.chat_in++;
        if (!this.limiter.allow()) {
          stats.dropped_ratelimit++;
          return;
        }
        stats.chat_accepted++;
        this.hub.chat(this, msg.room, msg.text, msg.ts);
        return;
      case 'leave':
        if (msg.room !== undefined) {
          // Leaves that room only; the connection stays open in its others.
          if (!this.rooms.has(msg.room)) stats.malformed++;
          else this.hub.leave(this, msg.room);
          return;
        }
        if (this.rooms.size === 0) {
          stats.malformed++;
          return;
        }
        this.hub.leaveAll(this);
        this.close(CLOSE_NORMAL);
        return;
    }
  }
}

module.exports = { Hub, Member, QUEUE_SIZE, MAX_ROOMS, CLOSE_NORMAL, CLOSE_GOING_AWAY };
