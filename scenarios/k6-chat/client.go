package chat

// client.go owns one chat client: the session runSession in
// scenarios/lib/chat.js runs in JavaScript, run natively. One controller
// goroutine (runClient itself) is the connection's only writer: join, chats,
// leave and close; it sends every chat at its intended time, or as soon after
// as it can, or counts it missed (schedule.go has the rules). One reader
// goroutine reads every frame, counts it and takes the latency of chats
// without decoding them. gorilla/websocket allows exactly this: one
// concurrent reader, one concurrent writer, and WriteControl (the pongs and
// close replies its default handlers send while reading) from any goroutine.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gorilla/websocket"
)

// Timing of a session, the same as chat.js where chat.js has one.
const (
	// handshakeTimeout bounds the TCP connect and the upgrade (k6/websockets uses 60 s).
	handshakeTimeout = 60 * time.Second
	// closeWait is how long a client waits for the server's close after it
	// sent leave, before it closes with 1000 itself (CLOSE_WAIT_MS in chat.js).
	closeWait = 2 * time.Second
	// After a client closed first, it waits for the server's answering close
	// at least closePatience, longer while frames still arrive (checked every
	// closeReplyWait), at most maxDrain; see finish.
	closeReplyWait = 1 * time.Second
	closePatience  = 5 * time.Second
	maxDrain       = 10 * time.Second
	// endSlack: a session's reads end at the latest this long after its
	// leave, beyond every wait above, so the read deadline never ends a
	// session the controller is still waiting for.
	endSlack = closeWait + maxDrain + time.Second
	// cutOffWait is how long a client cut off by the VU context (gracefulStop,
	// Ctrl-C) waits for the server's answer to its close: the run is ending.
	cutOffWait = 250 * time.Millisecond
	// joinWait: without a leaveAt, a server that has not echoed the join by
	// then is treated as if the leave time had come, so a stalled server
	// cannot hold a session forever.
	joinWait = 10 * time.Second
	// retryPause: after a failed connect or an abnormal close the client
	// lingers this long, so a dead server sees a trickle, not a spin
	// (RETRY_PAUSE_MS in chat.js).
	retryPause = 1 * time.Second
	// writeWait bounds every write: a server that stops reading ends the
	// session after it, and until then its client's chats are late (then
	// missed) by cause "write".
	writeWait = 10 * time.Second
	// idleWait bounds a read when the session's end is not known yet: twice
	// the servers' 30 s ping period.
	idleWait = 60 * time.Second
	// deadlineRefresh: the reader moves its read deadline at most this often.
	deadlineRefresh = 1 * time.Second
	// maxFrameBytes: a frame above this ends the session (gorilla answers 1009).
	maxFrameBytes = 1 << 20
	// readBufferBytes: one read syscall takes many small frames.
	readBufferBytes = 64 << 10
	// defaultProbeEvery: one client in this many times its chats (see
	// "Latency probes").
	defaultProbeEvery = 10
	// batchValues and batchAge bound how many counts and latencies a reader
	// keeps to itself before it hands them to the VU's tally.
	batchValues = 512
	batchAge    = 100 * time.Millisecond
)

const chatText = "hello from k6"

var (
	// The byte patterns a reader scans for. See the exactness argument in
	// scenarios/lib/chat.js: every user name and text in the room is ours and
	// contains neither "chat" nor "ts", and quotes inside JSON strings are
	// escaped, so '"chat"' occurs only as a chat's type and '"ts":' only as
	// its key.
	chatMarker = []byte(`"chat"`)
	tsKey      = []byte(`"ts":`)
	leaveFrame = []byte(`{"type":"leave"}`)
	// chatTextBytes starts the text of every chat we send; what follows it
	// is the chat's stamp (see chatFrame). No user name (k6-...) contains
	// it, so it occurs only in our texts.
	chatTextBytes = []byte(chatText)
)

// clientOptions is one session, as session(opts) describes it (see module.go).
type clientOptions struct {
	url  string
	user string
	// room is joined and chatted in ("public" unless set).
	room string
	// chats are sent at once when the join comes back.
	chats int
	// chatsPerSecond > 0 chats at this rate from the join until stopChatAt.
	chatsPerSecond float64
	// rateChanges, ascending: from each moment on, the rate is its chatsPerSecond.
	rateChanges []rateChange
	// stopChatAt, leaveAt: zero means none.
	stopChatAt time.Time
	leaveAt    time.Time
	// hasStay: leave stay after the join comes back.
	stay    time.Duration
	hasStay bool
	// instance is this k6 instance's number in a split run (1..N), stamped in
	// every chat; 0 outside a split run (no stamp).
	instance int
	// countOnly: this client counts the chats it receives without timing
	// them; the zero value is a latency probe (see "Latency probes").
	countOnly bool
	// transport: TLS settings and permessage-deflate (transport.go).
	transport transportOptions
	// slow: a slow reader (slow.go), which never chats; nil for the others.
	slow *slowOptions
	// sources: the loopback addresses to connect from, in turn (defaultSources
	// when empty).
	sources []net.IP
	// pingEvery > 0 sends a ping that often (see "Heartbeats").
	pingEvery time.Duration
	// churnPerMinute > 0: the client leaves and joins again at that rate
	// (see runChurning).
	churnPerMinute float64

	// Test hooks, zero in k6. timerDelay is added to every wait of the chat
	// timer (a load generator short of CPU); sendBufferBytes sets the
	// socket's send buffer (SO_SNDBUF), so a test fills it with a few chats.
	timerDelay      time.Duration
	sendBufferBytes int
}

// Latency probes.
//
// Every client reads every frame as soon as it arrives and counts it; one
// client in probeEvery (a probe) also times every chat it receives. Timing a
// chat (finding its ts, parsing the number, recording it) costs more than
// counting it, and a tenth of the clients give latency percentiles from
// hundreds of thousands of samples, so the load generator's cost per frame
// falls while the server sees exactly the same clients: what it cannot tell
// apart cannot change what it does. Everything counted (chat_received,
// ws_msgs_received, the received ratio) still counts every client.

// readConn is a client's connection as its reader sees it: it notes when each
// read returned, which is when every frame that read brought in was received
// (one clock reading per read, not per frame: at a million frames a second
// the clock cost a fifth of the reader).
type readConn struct {
	net.Conn
	lastRead time.Time
}

func (c *readConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.lastRead = time.Now()
	return n, err
}

// rateChange is one entry of a session's rate schedule.
type rateChange struct {
	at             time.Time
	chatsPerSecond float64
}

// readEnd is how the reader goroutine stopped.
type readEnd struct {
	err error
}

// session is one connection's state shared by its controller and reader.
type session struct {
	conn     *websocket.Conn
	rc       *readConn
	tally    *tally
	user     string
	instance int
	// timed: a probe, whose reader times every chat it receives.
	timed bool
	// ownJoin is the quoted user name as it appears in the join echo.
	ownJoin []byte
	// joined is closed when the join echo came back, at joinedAt (its read's
	// time), which the reader sets before.
	joined   chan struct{}
	joinedAt time.Time
	// endBy is the unix nanosecond by which the session will have ended, or
	// 0 while unknown; the reader's deadlines follow it.
	endBy atomic.Int64
	// progress is the reader's frame count, updated every progressEvery
	// frames: how the controller tells a draining reader from a stalled one.
	progress atomic.Int64

	// A slow reader's (slow.go): its options; set by the reader, read by the
	// controller once the reader has ended: whether it has paused, for how
	// long, when it first saw the connection closed while paused, and when
	// the reader ended.
	slow         *slowOptions
	pausedDone   bool
	pausedFor    time.Duration
	closedSeenAt time.Time
	readEndedAt  time.Time
	// Set by the controller: when it sent its leave (or close), and ending
	// once it is ending the session (a paused reader stops pausing).
	leftAt time.Time
	ending atomic.Bool
}

const progressEvery = 16

// defaultSources are the source addresses the clients of one k6 process
// spread their connections to a loopback server over when the session names
// none (sourceAddresses): 127.0.0.2 ... 127.0.0.9. One source address has one
// ephemeral port range per destination (32768-60999 by default, 28,232
// ports): a k6 holding more clients than that would run out of ports before
// the server ran out of memory. wscbench gives the list a step needs.
var defaultSources = func() []net.IP {
	ips := make([]net.IP, 8)
	for i := range ips {
		ips[i] = net.IPv4(127, 0, 0, byte(2+i))
	}
	return ips
}()

// nextSource picks each connection's source address in turn.
var nextSource atomic.Uint32

// dialSpread dials as net.Dialer does, from each of sources in turn
// (defaultSources when empty) when the server is at an IPv4 loopback address
// (all of 127.0.0.0/8 is this host), from the kernel's choice otherwise.
func dialSpread(ctx context.Context, network, addr string, sources []net.IP, slow *slowOptions) (net.Conn, error) {
	d := net.Dialer{Control: slow.socketControl()}
	if len(sources) == 0 {
		sources = defaultSources
	}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host).To4(); ip != nil && ip.IsLoopback() {
			n := nextSource.Add(1) % uint32(len(sources))
			d.LocalAddr = &net.TCPAddr{IP: sources[n]}
		}
	}
	return d.DialContext(ctx, network, addr)
}

// runChurning runs the client's sessions: one to leaveAt, or, with
// churnPerMinute, sessions that each end at the next moment of a Poisson
// process of that rate per minute (a clean leave), the next connecting at
// once, until leaveAt or ctx ends. The population stays the same size: a
// churning user is away only for its close and its next handshake.
func runChurning(ctx context.Context, o clientOptions, t *tally) {
	if o.churnPerMinute <= 0 {
		runClient(ctx, o, t)
		return
	}
	end := o.leaveAt
	for ctx.Err() == nil && time.Now().Before(end) {
		oi := o
		if at := time.Now().Add(churnGap(o.churnPerMinute, rand.Float64())); at.Before(end) {
			oi.leaveAt = at
		}
		runClient(ctx, oi, t)
		if oi.leaveAt.Equal(end) {
			return
		}
	}
}

// churnGap is the wait to a client's next leave at perMinute leaves a minute:
// exponential with mean 1/perMinute minutes, from u uniform in [0, 1).
func churnGap(perMinute, u float64) time.Duration {
	return time.Duration(-math.Log(1-u) / perMinute * float64(time.Minute))
}

// runClient runs one whole session and records it in t. It returns when the
// session ended: the server closed, the client left and closed, or ctx ended.
// After a failed connect or an abnormal close it lingers retryPause first.
func runClient(ctx context.Context, o clientOptions, t *tally) {
	t.add(cSessions, 1)
	var rc *readConn
	dialer := websocket.Dialer{
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialSpread(ctx, network, addr, o.sources, o.slow)
			if err != nil {
				return nil, err
			}
			if tc, ok := c.(*net.TCPConn); ok && o.sendBufferBytes > 0 {
				_ = tc.SetWriteBuffer(o.sendBufferBytes)
			}
			rc = &readConn{Conn: c}
			return rc, nil
		},
		HandshakeTimeout:  handshakeTimeout,
		ReadBufferSize:    readBufferBytes,
		WriteBufferSize:   4 << 10,
		TLSClientConfig:   o.transport.tls,
		EnableCompression: o.transport.deflate,
	}
	// start is also when the scenario meant this client to start chatting:
	// its schedule runs from here, whatever connecting and joining take.
	start := time.Now()
	if o.slow != nil {
		t.totals.slow.started(start)
	}
	conn, resp, err := dialer.DialContext(ctx, o.url, nil)
	t.sessionStarted(start, time.Since(start))
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return // cut off while connecting: not the server's failure
		}
		connectFailed(ctx, t, connectReason(err, resp))
		return
	}
	if n, ok := negotiated(conn, resp, o.transport); ok {
		t.totals.handshakes.succeeded(n)
	} else {
		_ = conn.Close()
		connectFailed(ctx, t, reasonDeflateRefused)
		return
	}
	userJSON, _ := json.Marshal(o.user)
	s := &session{
		conn:     conn,
		rc:       rc,
		tally:    t,
		user:     o.user,
		instance: o.instance,
		timed:    !o.countOnly,
		ownJoin:  userJSON,
		joined:   make(chan struct{}),
		slow:     o.slow,
	}
	conn.SetReadLimit(maxFrameBytes)
	if o.pingEvery > 0 {
		conn.SetPongHandler(s.pong)
	}
	// A write blocked on a server that does not read must not outlive the
	// VU context: its end moves the write deadline to now.
	stopWatch := context.AfterFunc(ctx, func() { _ = rc.SetWriteDeadline(time.Now()) })
	defer stopWatch()
	ended := make(chan readEnd, 1)
	go func() { ended <- s.read() }()

	outcome := s.control(ctx, o, ended, start)
	_ = conn.Close()
	t.sessionEnded(start)
	if o.slow != nil {
		closedAt, closed := s.closedByServer()
		closed = closed && outcome != outcomeCutOff
		t.totals.slow.ended(s.pausedFor, closedAt, closed)
		if closed {
			outcome = outcomeClosedByServer
		}
	}
	switch outcome {
	case outcomeClosedByServer:
		// A slow client the server let go of: what the scenario is about,
		// not an error (slow.go).
		t.add(cSessionsClosed, 1)
	case outcomeClean:
		t.add(cSessionsClosed, 1)
	case outcomeAbnormal:
		t.add(cSessionsClosed, 1)
		t.add(cAbnormalCloses, 1)
		t.add(cWsErrors, 1)
		pause(ctx, retryPause)
	case outcomeCutOff:
		// Like a session k6/websockets cuts off: neither closed nor abnormal,
		// so ws_sessions - sessions_closed counts it.
	}
}

// connectFailed counts a failed connect with its reason and lingers.
func connectFailed(ctx context.Context, t *tally, reason string) {
	t.add(cConnectErrors, 1)
	t.add(cWsErrors, 1)
	t.totals.handshakes.failed(reason)
	pause(ctx, retryPause)
}

type outcome int

const (
	outcomeClean outcome = iota
	outcomeAbnormal
	outcomeCutOff
	// outcomeClosedByServer: a slow client closed or dropped by the server
	// before its leave.
	outcomeClosedByServer
)

// control is the writer side: join, chats, leave, close. It returns once the
// reader has ended (or been ended by closing the connection). start is when
// the client was meant to start chatting.
func (s *session) control(ctx context.Context, o clientOptions, ended <-chan readEnd, start time.Time) outcome {
	if o.room == "" {
		o.room = "public"
	}
	c := &chatter{
		s: s, room: o.room, instance: o.instance, start: start, atOnce: o.chats,
		sched: newChatSchedule(&o, start, rand.Float64()),
	}
	// fail ends a session whose write failed: every chat due is missed.
	fail := func() outcome {
		c.settle(time.Now())
		s.ending.Store(true)
		if ctx.Err() != nil {
			s.cutOff(ended)
			return outcomeCutOff
		}
		return s.finish(ended)
	}
	roomJSON, _ := json.Marshal(o.room)
	join := append(append([]byte(`{"type":"join","room":`), roomJSON...), `,"user":`...)
	if !s.write(append(append(join, s.ownJoin...), '}'), time.Now()) {
		return fail()
	}

	// Each timer is a channel that stays nil until the timer is armed.
	var leaveC, joinTimeoutC, chatC, closeByC <-chan time.Time
	leaving := false
	chatTimer := time.NewTimer(time.Hour)
	chatTimer.Stop()
	defer chatTimer.Stop()
	// armChat sets the chat timer for the next intended time.
	armChat := func() {
		chatC = nil
		if next := c.sched.next; !next.IsZero() && !leaving {
			chatTimer.Reset(time.Until(next) + o.timerDelay)
			chatC = chatTimer.C
		}
	}
	if !o.leaveAt.IsZero() {
		leaveC = time.After(time.Until(o.leaveAt))
		s.setEndBy(o.leaveAt.Add(endSlack))
	}
	// Heartbeats: a ping every pingEvery from a random phase, each stamped
	// with its intended time.
	var pingC <-chan time.Time
	var nextPing time.Time
	pingTimer := time.NewTimer(time.Hour)
	pingTimer.Stop()
	defer pingTimer.Stop()
	armPing := func() {
		pingC = nil
		if o.pingEvery > 0 && !leaving {
			pingTimer.Reset(time.Until(nextPing))
			pingC = pingTimer.C
		}
	}
	if o.pingEvery > 0 {
		nextPing = start.Add(time.Duration(rand.Float64() * float64(o.pingEvery)))
		armPing()
	}
	if o.leaveAt.IsZero() {
		// With a leave time the session's end is known anyway; a server that
		// never echoes the join (the blaster) is then still read to the end.
		joinTimeoutC = time.After(joinWait)
	}
	joined := s.joined

	// leave sends what is due, counts the rest missed, and says goodbye.
	leave := func() bool {
		leaving = true
		s.ending.Store(true)
		s.leftAt = time.Now()
		chatC, joinTimeoutC, leaveC, pingC = nil, nil, nil, nil
		if !c.joinedAt.IsZero() && !c.sendDue() {
			return false
		}
		c.settle(time.Now())
		s.setEndBy(time.Now().Add(endSlack))
		closeByC = time.After(closeWait)
		return s.write(leaveFrame, time.Now())
	}

	for {
		select {
		case <-ctx.Done():
			c.settle(time.Now())
			s.ending.Store(true)
			s.cutOff(ended)
			return outcomeCutOff
		case e := <-ended:
			c.settle(time.Now())
			return classify(e.err)
		case <-joined:
			joined = nil
			joinTimeoutC = nil
			if leaving {
				continue
			}
			c.joined(s.joinedAt)
			if o.hasStay {
				leaveC = time.After(o.stay)
				s.setEndBy(time.Now().Add(o.stay + endSlack))
			}
			if !c.sendAtOnce() || !c.sendDue() {
				return fail()
			}
			armChat()
		case <-chatC:
			if !c.sendDue() {
				return fail()
			}
			armChat()
		case <-pingC:
			if !s.ping(nextPing) {
				return fail()
			}
			nextPing = nextPing.Add(o.pingEvery)
			armPing()
		case <-joinTimeoutC:
			joinTimeoutC = nil
			if !leaving && !leave() {
				return fail()
			}
		case <-leaveC:
			if !leaving && !leave() {
				return fail()
			}
		case <-closeByC:
			// The server did not close after our leave: close with 1000
			// ourselves. Clean only if it answers with a close frame.
			s.closeNormal(time.Now().Add(writeWait))
			return s.finish(ended)
		}
	}
}

// Heartbeats.
//
// A client with pingEvery sends a WebSocket ping on a fixed period from a
// random phase, as socket.io's and Phoenix's clients do, its payload the
// intended time in unix microseconds. The pong echoes it (RFC 6455 5.5.3), so
// the reader times the pong from the intended time, like a chat: a server or
// a write that held the ping up shows in the pong's latency.

// ping writes a ping intended at intended; false when the write failed.
func (s *session) ping(intended time.Time) bool {
	payload := strconv.AppendInt(nil, intended.UnixMicro(), 10)
	if err := s.conn.WriteControl(websocket.PingMessage, payload, time.Now().Add(writeWait)); err != nil {
		return false
	}
	s.tally.add(cPingsSent, 1)
	return true
}

// pong is the reader's pong handler: it records the pong's latency from its
// ping's intended time. A pong whose payload is not ours is counted, not timed.
func (s *session) pong(payload string) error {
	s.tally.add(cPongsReceived, 1)
	if us, err := strconv.ParseInt(payload, 10, 64); err == nil {
		s.tally.totals.recordPong(clampUs(s.rc.lastRead.UnixMicro() - us))
	}
	return nil
}

// chatter is the controller's chats: the schedule, when the server held the
// client up, and what was missed, applying schedule.go's rules to the
// connection. Only the controller goroutine touches it.
type chatter struct {
	s        *session
	room     string
	instance int
	// start is the intended time of the at-once chats and where the
	// schedule starts; atOnce are the at-once chats not sent yet.
	start  time.Time
	atOnce int
	sched  chatSchedule
	holds  holdLog
	// joinedAt: zero until the join was acknowledged.
	joinedAt time.Time
	// missedUs are the held times of chats the server made the client miss,
	// not yet handed to the totals.
	missedUs []int64
}

// joined records the wait for the join's acknowledgement, from start to at.
func (c *chatter) joined(at time.Time) {
	c.holds.add(c.start, at)
	c.joinedAt = at
}

// sendAtOnce sends the at-once chats, all intended at start. They are one
// burst the scenario asked for, not a backlog, so the catch-up bounds do not
// apply; the join wait bounds how late they are.
func (c *chatter) sendAtOnce() bool {
	for c.atOnce > 0 {
		c.atOnce--
		if !c.send(c.start) {
			return false
		}
	}
	return true
}

// sendDue sends every chat whose intended time has come, oldest first, and
// misses what is past the catch-up bounds; false when a write failed. A write
// that blocks holds the loop, so the bounds are checked again after each.
func (c *chatter) sendDue() bool {
	defer c.flushMissed()
	for {
		now := time.Now()
		if !c.sched.due(now) {
			break
		}
		for c.sched.due(now) && now.Sub(c.sched.next) > maxCatchUpAge {
			c.miss(c.sched.next, now)
			c.sched.advance()
		}
		for n := c.sched.countDue(now); n > maxCatchUp; n-- {
			c.miss(c.sched.next, now)
			c.sched.advance()
		}
		if !c.sched.due(now) {
			break
		}
		intended := c.sched.next
		c.sched.advance()
		if !c.send(intended) {
			return false
		}
	}
	if c.sched.next.IsZero() {
		c.holds.prune(time.Now())
	} else {
		c.holds.prune(c.sched.next)
	}
	return true
}

// send writes the chat intended at intended, stamped as chatFrame says, and
// counts it by its cause; a chat whose write fails is missed.
func (c *chatter) send(intended time.Time) bool {
	now := time.Now()
	late := c.holds.lateBy(intended, now, c.joinedAt)
	ok := c.s.write(chatFrame(c.room, now.Add(-late.server), c.instance, late.server.Microseconds()), now)
	end := time.Now()
	c.holds.add(now, end)
	if !ok {
		// Its own write failed: the server's (or the VU context's, which
		// ends the run anyway).
		c.missFor(lateWrite, c.holds.lateBy(intended, end, c.joinedAt))
		return false
	}
	t := c.s.tally
	t.add(cChatSent, 1)
	t.add(cChatsIntended, 1)
	t.add(sentBy[late.cause()], 1)
	t.totals.countAt(now, cChatSent, cChatsIntended, sentBy[late.cause()])
	return true
}

// miss counts the chat intended at intended as missed, declared at at, for
// its lateness's cause.
func (c *chatter) miss(intended, at time.Time) {
	late := c.holds.lateBy(intended, at, c.joinedAt)
	c.missFor(late.cause(), late)
}

// missFor counts a missed chat for why. Only a chat the server made the
// client miss goes into the response time, as the time the server had held
// it; one missed by the client's own lateness is the load generator's.
func (c *chatter) missFor(why cause, late lateness) {
	c.s.tally.add(cChatsIntended, 1)
	c.s.tally.add(missedBy[why], 1)
	c.s.tally.totals.countAt(time.Now(), cChatsIntended, missedBy[why])
	if why == lateJoin || why == lateWrite {
		c.missedUs = append(c.missedUs, clampUs(late.server.Microseconds()))
	}
}

// settle ends the schedule at at: every chat due by then and not sent is
// missed (a client never acknowledged was held by the join all along), and
// no later one is intended any more.
func (c *chatter) settle(at time.Time) {
	if c.joinedAt.IsZero() {
		c.joined(at)
	}
	for ; c.atOnce > 0; c.atOnce-- {
		c.miss(c.start, at)
	}
	for ; c.sched.due(at); c.sched.advance() {
		c.miss(c.sched.next, at)
	}
	c.sched.end()
	c.flushMissed()
}

func (c *chatter) flushMissed() {
	if len(c.missedUs) > 0 {
		c.s.tally.totals.recordMissed(c.missedUs)
		c.missedUs = c.missedUs[:0]
	}
}

// finish waits for the reader to end, after a close was sent or the
// connection broke, and classifies how it ended. The server's close frame
// queues behind every frame already in flight (against a fast sender that can
// be megabytes of socket buffers per connection) and an overloaded server may
// take seconds to answer, so the wait lasts at least closePatience, goes on
// while frames still arrive, and ends at maxDrain; then the connection is
// closed and the session counts as abnormal (no close frame at all).
func (s *session) finish(ended <-chan readEnd) outcome {
	start := time.Now()
	giveUp := start.Add(maxDrain)
	s.setEndBy(giveUp.Add(time.Second))
	for {
		seen := s.progress.Load()
		if e, ok := waitEnded(ended, closeReplyWait); ok {
			return classify(e.err)
		}
		now := time.Now()
		stalled := s.progress.Load() == seen && now.Sub(start) >= closePatience
		if stalled || now.After(giveUp) {
			_ = s.conn.Close()
			<-ended
			return outcomeAbnormal
		}
	}
}

// cutOff ends a session the VU context ended: a close with 1000, a short
// wait for the answer, then the connection is closed whatever came.
func (s *session) cutOff(ended <-chan readEnd) {
	s.closeNormal(time.Now().Add(cutOffWait))
	if _, ok := waitEnded(ended, cutOffWait); !ok {
		_ = s.conn.Close()
		<-ended
	}
}

func waitEnded(ended <-chan readEnd, d time.Duration) (readEnd, bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case e := <-ended:
		return e, true
	case <-timer.C:
		return readEnd{}, false
	}
}

// classify: a close frame with 1000 or 1001 is clean; any other code, and no
// close frame at all (EOF, reset, timeout, a closed connection), is abnormal.
func classify(err error) outcome {
	var ce *websocket.CloseError
	if errors.As(err, &ce) && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseGoingAway) {
		return outcomeClean
	}
	return outcomeAbnormal
}

// write sends frame, started at now.
func (s *session) write(frame []byte, now time.Time) bool {
	_ = s.conn.SetWriteDeadline(now.Add(writeWait))
	if err := s.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		return false
	}
	s.tally.add(cMsgsSent, 1)
	return true
}

// closeNormal sends a close frame with 1000, giving up at deadline; the
// reader sees the server's answer.
func (s *session) closeNormal(deadline time.Time) {
	_ = s.conn.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), deadline)
}

func (s *session) setEndBy(t time.Time) {
	s.endBy.Store(t.UnixNano())
}

// chatFrame is a chat in room stamped with ts (epoch ms to the microsecond)
// and, after chatText in its text, with the sending instance of a split run
// (" #N") and with how long the server held it before it could be written
// (" +µs", only when it did). ts is the chat's intended time moved on by the
// load generator's own lateness (schedule.go), which is the moment it was
// written less held: a receiver takes the response time from ts and the
// service time from ts + held. Only a chat the server held costs the extra
// bytes. The room was checked to need no JSON escaping (checkName).
func chatFrame(room string, ts time.Time, instance int, heldUs int64) []byte {
	us := ts.UnixMicro()
	b := make([]byte, 0, 96+len(room))
	b = append(b, `{"type":"chat","room":"`...)
	b = append(b, room...)
	b = append(b, `","text":"`+chatText...)
	if instance > 0 {
		b = append(b, " #"...)
		b = strconv.AppendInt(b, int64(instance), 10)
	}
	if heldUs > 0 {
		b = append(b, " +"...)
		b = strconv.AppendInt(b, heldUs, 10)
	}
	b = append(b, `","ts":`...)
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10), '}')
	return b
}

// read is the reader goroutine: every frame until the connection ends. It
// returns the error that ended it (a *websocket.CloseError for a close frame).
func (s *session) read() readEnd {
	t := s.tally
	b := newReadBatch(t)
	defer b.flush()
	var deadlineSet time.Time
	var endBySet int64
	buf := make([]byte, 0, 4096)
	joined := false
	var frames int64
	for {
		now := s.rc.lastRead
		if endBy := s.endBy.Load(); endBy != endBySet || now.Sub(deadlineSet) >= deadlineRefresh {
			deadline := now.Add(idleWait)
			if endBy != 0 && time.Unix(0, endBy).Before(deadline) {
				deadline = time.Unix(0, endBy)
			}
			_ = s.conn.SetReadDeadline(deadline)
			deadlineSet, endBySet = now, endBy
		}
		if s.slow != nil && !s.pausedDone {
			s.pauseReading()
			if s.pausedDone {
				continue // the read deadline from the resumed clock
			}
		}
		mt, r, err := s.conn.NextReader()
		if err != nil {
			s.readEndedAt = time.Now()
			return readEnd{err: err}
		}
		buf, err = readAll(r, buf[:0])
		if err != nil {
			s.readEndedAt = time.Now()
			return readEnd{err: err}
		}
		now = s.rc.lastRead
		b.frameAt(now)
		b.msgs++
		if frames++; frames%progressEvery == 0 {
			s.progress.Store(frames)
		}
		if mt != websocket.TextMessage || !jsonish(buf) {
			b.malformed++
		} else if bytes.Contains(buf, chatMarker) {
			b.chats++
			if s.timed {
				s.timeChat(b, buf, now)
			}
		} else if !joined && bytes.Contains(buf, s.ownJoin) {
			var msg struct{ Type, User string }
			if json.Unmarshal(buf, &msg) == nil && msg.Type == "join" && msg.User == s.user {
				joined = true
				s.joinedAt = now
				close(s.joined)
			}
		}
		b.maybeFlush(now)
	}
}

// timeChat records the service and response times of the chat in frame,
// received at now: on its own, or (service time only) apart when another
// instance of a split run sent it.
func (s *session) timeChat(b *readBatch, frame []byte, now time.Time) {
	at := bytes.Index(frame, tsKey)
	if at < 0 {
		return
	}
	ts, ok := parseNumber(frame[at+len(tsKey):])
	if !ok {
		return
	}
	responseUs := float64(now.UnixNano())/1e3 - ts*1e3
	from, heldUs := chatStamp(frame)
	serviceUs := responseUs - float64(heldUs)
	if s.instance > 0 && from > 0 && from != s.instance {
		b.crossLatency(serviceUs)
	} else {
		b.latency(serviceUs, responseUs)
	}
}

// chatStamp reads what chatFrame put after chatText: the sending instance
// (0: none) and the µs the server held the chat before it was written.
func chatStamp(frame []byte) (instance int, heldUs int64) {
	at := bytes.Index(frame, chatTextBytes)
	if at < 0 {
		return 0, 0
	}
	rest := frame[at+len(chatTextBytes):]
	number := func(mark byte) int64 {
		if len(rest) < 2 || rest[0] != ' ' || rest[1] != mark {
			return 0
		}
		rest = rest[2:]
		var n int64
		for len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
			if n < highestTrackableUs {
				n = n*10 + int64(rest[0]-'0')
			}
			rest = rest[1:]
		}
		return n
	}
	instance = int(min(number('#'), maxInstances))
	return instance, number('+')
}

// readAll appends the rest of the frame in r to buf.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// jsonish: an object's braces around anything. Enough to tell a chat frame
// from garbage without decoding it.
func jsonish(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}'
}

// parseNumber parses the JSON number at the start of b (after optional spaces).
func parseNumber(b []byte) (float64, bool) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	j := i
	for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == '-' || b[j] == '+' || b[j] == 'e' || b[j] == 'E') {
		j++
	}
	if j == i {
		return 0, false
	}
	// The string does not outlive the call, so it may share buf's bytes.
	v, err := strconv.ParseFloat(unsafe.String(&b[i], j-i), 64)
	return v, err == nil
}

// pause sleeps d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
