// Package chat is the k6 extension k6/x/chat: the wscbench chat client run
// natively in Go inside k6, so that k6 can receive chats far faster than its
// JavaScript WebSocket path (which costs ~50 µs of CPU per frame and queues
// frames without bound).
//
//	import chat from 'k6/x/chat';
//	chat.session({ url, user, room, chats, chatsPerSecond, rateChanges, stopChatAt, leaveAt, stayMs, clients, instance,
//	               latencyProbeEvery, slow: { recvBufferBytes, pauseFromMs, pauseUntilMs } });
//	chat.schedule({ periodMs, startMs, steps: [{ clients, fromMs, toMs }] }); // windows of the report
//	chat.stepStats(i); // step i so far, to stop a test whose step broke
//	chat.report(); // in handleSummary: this process's totals and latency histogram
//
// This file is the thin k6 glue: the module, the options, and the flush of
// counts into k6 samples. The session itself is client.go; the counting is
// tally.go; report()'s document is report.go.
package chat

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/grafana/sobek"

	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"
)

func init() {
	modules.Register("k6/x/chat", New())
}

// flushPeriod: each VU pushes its counts to k6 at most this often, as one
// aggregated sample per metric, never one per message.
const flushPeriod = 500 * time.Millisecond

// maxClients bounds clients per session() call.
const maxClients = 100_000

// maxInstances bounds the instance number of a split run.
const maxInstances = 10_000

type (
	// RootModule is shared by every VU of the k6 process; it keeps the
	// process-wide totals that report() returns.
	RootModule struct {
		totals *totals
		// clientSeq numbers every client this process starts; every
		// latencyProbeEvery-th is a probe (see "Latency probes").
		clientSeq atomic.Uint64
		// slowTotals are the slow clients' (slow.go), kept apart from totals.
		slowTotals *totals
		// startMs is the test's start as chat.schedule gave it (0: not given),
		// the origin of the slow report's closed_at_ms.
		startMs atomic.Int64
	}

	// ModuleInstance is one VU's k6/x/chat.
	ModuleInstance struct {
		vu      modules.VU
		root    *RootModule
		metrics *chatMetrics
		tally   *tally
		// slowTally counts this VU's slow clients into the root's slowTotals;
		// it feeds no k6 metric.
		slowTally *tally
	}

	// chatMetrics are the metrics the JS path records, by the same names, so
	// thresholds and the summary read the same either way.
	chatMetrics struct {
		counters          [numCounters]*metrics.Metric // nil: report only
		chatLatency       *metrics.Metric
		wsConnecting      *metrics.Metric
		wsSessionDuration *metrics.Metric
	}
)

var (
	_ modules.Module   = &RootModule{}
	_ modules.Instance = &ModuleInstance{}
)

// New returns the root module, with empty totals.
func New() *RootModule {
	return &RootModule{totals: newTotals(), slowTotals: newTotals()}
}

// NewModuleInstance registers (or finds) the metrics once for this VU.
func (r *RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	m, err := registerMetrics(vu.InitEnv().Registry, vu.InitEnv().BuiltinMetrics)
	if err != nil {
		common.Throw(vu.Runtime(), fmt.Errorf("k6/x/chat: failed to register metrics: %w", err))
	}
	return &ModuleInstance{vu: vu, root: r, metrics: m, tally: newTally(r.totals), slowTally: newTally(r.slowTotals)}
}

func registerMetrics(registry *metrics.Registry, builtin *metrics.BuiltinMetrics) (*chatMetrics, error) {
	m := &chatMetrics{
		wsConnecting:      builtin.WSConnecting,
		wsSessionDuration: builtin.WSSessionDuration,
	}
	m.counters[cSessions] = builtin.WSSessions
	m.counters[cMsgsSent] = builtin.WSMessagesSent
	m.counters[cMsgsReceived] = builtin.WSMessagesReceived
	for _, c := range []counter{cSessionsClosed, cConnectErrors, cAbnormalCloses, cWsErrors, cChatSent, cChatReceived} {
		metric, err := registry.NewMetric(counterNames[c], metrics.Counter)
		if err != nil {
			return nil, err
		}
		m.counters[c] = metric
	}
	var err error
	m.chatLatency, err = registry.NewMetric("chat_latency", metrics.Trend, metrics.Time)
	return m, err
}

// Exports: session and report, as the default export and by name.
func (mi *ModuleInstance) Exports() modules.Exports {
	api := map[string]any{
		"session":   mi.session,
		"report":    mi.report,
		"schedule":  mi.schedule,
		"stepStats": mi.stepStats,
	}
	return modules.Exports{Default: api, Named: api}
}

// session runs one chat session (or `clients` of them at once) to its end,
// blocking the VU meanwhile. See parseOptions for the options.
func (mi *ModuleInstance) session(v sobek.Value) {
	rt := mi.vu.Runtime()
	state := mi.vu.State()
	if state == nil {
		common.Throw(rt, errors.New("chat.session() runs sessions: call it from a VU's function, not the init context"))
	}
	o, clients, sm, err := parseOptions(rt, v)
	if err != nil {
		common.Throw(rt, err)
	}
	mi.root.totals.setSampling(sm)
	if o.instance > 0 {
		mi.root.totals.setInstance(o.instance)
	}
	ctx := mi.vu.Context()
	tags := state.Tags.GetCurrentValues()

	stop := make(chan struct{})
	flusherDone := make(chan struct{})
	go func() {
		defer close(flusherDone)
		ticker := time.NewTicker(flushPeriod)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
				mi.flush(state, tags)
			}
		}
	}()

	// A slow client is never a probe and counts into the slow tally only.
	t := mi.tally
	if o.slow != nil {
		t = mi.slowTally
	}
	probe := func() bool { return o.slow == nil && mi.root.nextIsProbe(sm) }
	if clients == 1 {
		o.countOnly = !probe()
		runChurning(ctx, o, t)
	} else {
		var wg sync.WaitGroup
		for i := 1; i <= clients; i++ {
			oi := o
			oi.user = o.user + "-" + strconv.Itoa(i)
			oi.countOnly = !probe()
			wg.Add(1)
			go func() {
				defer wg.Done()
				runChurning(ctx, oi, t)
			}()
		}
		wg.Wait()
	}
	close(stop)
	<-flusherDone
	mi.flush(state, tags)
}

// sampling is how a process's clients time chats: one in probeEvery is a
// latency probe (1: every client).
type sampling struct {
	probeEvery int
}

// nextIsProbe numbers the next client and says whether it is a probe: the
// first, and every probeEvery-th after it.
func (r *RootModule) nextIsProbe(s sampling) bool {
	return (r.clientSeq.Add(1)-1)%uint64(s.probeEvery) == 0
}

// flush hands everything counted since the last flush to the totals and to
// k6: one sample per counter, at most reservoirSize latencies, one connect
// time and one duration per session.
func (mi *ModuleInstance) flush(state *lib.State, tags metrics.TagsAndMeta) {
	mi.slowTally.drain() // into the slow totals only
	d := mi.tally.drain()
	now := time.Now()
	samples := make([]metrics.Sample, 0, int(numCounters)+len(d.latencyUs)+len(d.connecting)+len(d.durations))
	sample := func(m *metrics.Metric, at time.Time, value float64) {
		samples = append(samples, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: m, Tags: tags.Tags},
			Time:       at,
			Metadata:   tags.Metadata,
			Value:      value,
		})
	}
	for c, n := range d.counts {
		if m := mi.metrics.counters[c]; m != nil && n != 0 {
			sample(m, now, float64(n))
		}
	}
	for _, us := range d.latencyUs {
		sample(mi.metrics.chatLatency, now, float64(us)/1000)
	}
	for _, s := range d.connecting {
		sample(mi.metrics.wsConnecting, s.at, metrics.D(s.duration))
	}
	for _, s := range d.durations {
		sample(mi.metrics.wsSessionDuration, s.at, metrics.D(s.duration))
	}
	if len(samples) == 0 {
		return
	}
	metrics.PushIfNotDone(mi.vu.Context(), state.Samples, metrics.ConnectedSamples{
		Samples: samples, Tags: tags.Tags, Time: now,
	})
}

// report returns this k6 process's totals (see Report); call it from
// handleSummary, when every VU has flushed.
func (mi *ModuleInstance) report() map[string]any {
	return mi.root.report().jsValue()
}

// report is the process's report, with the slow clients' object when there
// were any.
func (r *RootModule) report() Report {
	rep := r.totals.report()
	var start time.Time
	if ms := r.startMs.Load(); ms > 0 {
		start = time.UnixMilli(ms)
	}
	rep.Slow = r.slowTotals.slowReport(start)
	return rep
}

// schedule sets the report's windows once per k6 process (see
// totals.schedule): periodMs, the length of the periodic windows (default
// 10000), and steps, the step schedule as epoch ms [fromMs, toMs) windows in
// order, each with its planned clients; and startMs, the test's start in
// epoch ms, from which the slow report's closed_at_ms count.
func (mi *ModuleInstance) schedule(v sobek.Value) {
	rt := mi.vu.Runtime()
	period, steps, err := parseSchedule(rt, v)
	if err != nil {
		common.Throw(rt, err)
	}
	start, err := parseStart(rt, v)
	if err != nil {
		common.Throw(rt, err)
	}
	if start > 0 {
		mi.root.startMs.CompareAndSwap(0, start)
	}
	mi.root.totals.schedule(period, steps)
}

// parseStart reads chat.schedule's startMs (0 when absent).
func parseStart(rt *sobek.Runtime, v sobek.Value) (int64, error) {
	val := v.ToObject(rt).Get("startMs")
	if common.IsNullish(val) {
		return 0, nil
	}
	ms := val.ToFloat()
	if math.IsNaN(ms) || ms <= 0 || math.IsInf(ms, 0) {
		return 0, fmt.Errorf("chat.schedule: startMs must be epoch milliseconds, got %q", val.String())
	}
	return int64(ms), nil
}

// stepStats returns step i so far (StepStats as a plain object), or null.
func (mi *ModuleInstance) stepStats(i int) any {
	st, ok := mi.root.totals.stepStats(i)
	if !ok {
		return nil
	}
	return map[string]any{
		"clients": st.Clients, "from_ms": st.FromMs, "to_ms": st.ToMs,
		"chat_sent": st.ChatSent, "chat_received": st.ChatReceived, "errors": st.Errors,
		"latency_count": st.LatencyCount, "latency_p95_ms": st.LatencyP95Ms, "latency_max_ms": st.LatencyMaxMs,
		"chats_intended": st.ChatsIntended, "chats_missed": st.ChatsMissed,
		"response_time_p95_ms": st.ResponseTimeP95Ms, "response_time_max_ms": st.ResponseTimeMaxMs,
	}
}

func parseSchedule(rt *sobek.Runtime, v sobek.Value) (time.Duration, []step, error) {
	if common.IsNullish(v) {
		return 0, nil, errors.New("chat.schedule(opts): opts is required")
	}
	obj := v.ToObject(rt)
	number := func(o *sobek.Object, name string) (float64, bool, error) {
		val := o.Get(name)
		if common.IsNullish(val) {
			return 0, false, nil
		}
		switch x := val.Export().(type) {
		case int64:
			return float64(x), true, nil
		case float64:
			return x, !math.IsNaN(x), nil
		default:
			return 0, false, fmt.Errorf("chat.schedule: %s must be a number, got %q", name, val.String())
		}
	}
	period := defaultPeriod
	if ms, ok, err := number(obj, "periodMs"); err != nil {
		return 0, nil, err
	} else if ok {
		if ms != math.Trunc(ms) || ms < 100 || ms > 3_600_000 {
			return 0, nil, fmt.Errorf("chat.schedule: periodMs must be an integer from 100 to 3600000, got %v", ms)
		}
		period = time.Duration(ms) * time.Millisecond
	}
	var list []sobek.Value
	if raw := obj.Get("steps"); !common.IsNullish(raw) {
		if err := rt.ExportTo(raw, &list); err != nil {
			return 0, nil, fmt.Errorf("chat.schedule: steps must be an array: %w", err)
		}
	}
	if len(list) > maxSteps {
		return 0, nil, fmt.Errorf("chat.schedule: at most %d steps, got %d", maxSteps, len(list))
	}
	steps := make([]step, 0, len(list))
	for i, item := range list {
		if common.IsNullish(item) {
			return 0, nil, fmt.Errorf("chat.schedule: step %d is empty", i)
		}
		o := item.ToObject(rt)
		clients, _, err1 := number(o, "clients")
		from, _, err2 := number(o, "fromMs")
		to, _, err3 := number(o, "toMs")
		if err := errors.Join(err1, err2, err3); err != nil {
			return 0, nil, err
		}
		if from <= 0 || to <= from || clients < 0 || clients != math.Trunc(clients) {
			return 0, nil, fmt.Errorf("chat.schedule: step %d needs 0 < fromMs < toMs (epoch ms) and whole clients, got clients %v, fromMs %v, toMs %v", i, clients, from, to)
		}
		st := step{clients: int(clients), from: time.UnixMilli(int64(from)), to: time.UnixMilli(int64(to))}
		if i > 0 && st.from.Before(steps[i-1].to) {
			return 0, nil, fmt.Errorf("chat.schedule: step %d starts before step %d ends", i, i-1)
		}
		steps = append(steps, st)
	}
	return period, steps, nil
}

// The options session() takes.
var optionNames = []string{
	"url", "user", "room", "chats", "chatsPerSecond", "rateChanges", "stopChatAt", "leaveAt", "stayMs", "clients", "instance",
	"latencyProbeEvery", "caFile", "insecureSkipVerify", "deflate", "slow", "sourceAddresses",
	"pingEveryMs", "churnPerMinute",
}

// maxSources bounds sourceAddresses: 127.0.0.0/8 has fewer.
const maxSources = 1 << 16

// maxProbeEvery bounds latencyProbeEvery.
const maxProbeEvery = 1000

// maxRateChanges bounds a session's rate schedule.
const maxRateChanges = 1000

// parseOptions reads session()'s options object:
//   - url (required): ws:// or wss:// URL of the chat server's /ws;
//   - user (required): 1-64 characters, no quotes, backslashes or control
//     characters (with clients > 1 the users are user-1 ... user-N);
//   - room: the room to join and chat in, the same rules as a user (default
//     "public", the only room the servers have today);
//   - chats: chats to send at once when the join comes back, all intended
//     at the session's start (default 0);
//   - chatsPerSecond: chat at this rate from the session's start (not the
//     join's acknowledgement) until stopChatAt, at a random phase of the
//     period (default 0; see schedule.go);
//   - rateChanges: [[epochMs, chatsPerSecond], ...] ascending: from each
//     moment on, chat at that rate instead (a stepped scenario keeps the
//     load per client what a room of fixed size would give it);
//   - stopChatAt: epoch ms after which no chat is sent (default: none);
//   - leaveAt: epoch ms at which to leave, or
//   - stayMs: ms to stay after the join comes back, then leave;
//   - clients: run this many clients at once in this call (default 1);
//   - instance: this k6 instance's number in a run split over several (1 to
//     maxInstances), stamped in every chat so that a receiver keeps the
//     latency of another instance's chats apart (default 0: not split);
//   - latencyProbeEvery: one client in this many (counted over the process)
//     times every chat it receives; the others count without timing
//     (default 10; 1: every client);
//   - caFile: for wss://, a PEM file of the certificate(s) to trust (the
//     run's self-signed certificate); default: the system's roots;
//   - insecureSkipVerify: for wss://, accept any certificate (explicit only;
//     not with caFile);
//   - deflate: offer permessage-deflate, and count a handshake whose answer
//     lacks it as a failed connect (default false);
//   - pingEveryMs: send a WebSocket ping every this many ms, at a random
//     phase of the period, each carrying its intended time, and time the
//     pong from it (report's pong_latency_us; default 0: no pings);
//   - churnPerMinute: the share of the clients that leave and join again
//     each minute (0 to 1; default 0): each client leaves cleanly at random
//     (Poisson) moments at that rate and connects and joins again at once,
//     until leaveAt (which churn needs);
//   - slow: {recvBufferBytes, pauseFromMs, pauseUntilMs}: slow readers
//     (slow.go): dialed with that SO_RCVBUF, their readers stop reading from
//     pauseFromMs to pauseUntilMs (epoch ms), they never chat (no chats,
//     chatsPerSecond or rateChanges with it), and they count into the
//     report's "slow" object only (default: none).
//
// It returns the options, the number of clients and which of them time chats.
func parseOptions(rt *sobek.Runtime, v sobek.Value) (clientOptions, int, sampling, error) {
	o, clients, err := parseSessionOptions(rt, v)
	if err != nil {
		return o, 0, sampling{}, err
	}
	sm, err := parseSampling(v.ToObject(rt))
	return o, clients, sm, err
}

// parseTransport reads caFile, insecureSkipVerify and deflate.
func parseTransport(obj *sobek.Object, o *clientOptions) error {
	caFile := ""
	if v := obj.Get("caFile"); !common.IsNullish(v) {
		caFile = v.String()
	}
	insecure := false
	if v := obj.Get("insecureSkipVerify"); !common.IsNullish(v) {
		insecure = v.ToBoolean()
	}
	if v := obj.Get("deflate"); !common.IsNullish(v) {
		o.transport.deflate = v.ToBoolean()
	}
	if (caFile != "" || insecure) && !strings.HasPrefix(o.url, "wss://") {
		return fmt.Errorf("chat.session: caFile and insecureSkipVerify are for wss:// URLs, got %q", o.url)
	}
	cfg, err := newTLSConfig(caFile, insecure)
	o.transport.tls = cfg
	return err
}

// parseSampling reads latencyProbeEvery.
func parseSampling(obj *sobek.Object) (sampling, error) {
	s := sampling{probeEvery: defaultProbeEvery}
	val := obj.Get("latencyProbeEvery")
	if common.IsNullish(val) {
		return s, nil
	}
	n := val.ToFloat()
	if n != math.Trunc(n) || n < 1 || n > maxProbeEvery {
		return s, fmt.Errorf("chat.session: latencyProbeEvery must be an integer from 1 to %d, got %s", maxProbeEvery, val.String())
	}
	s.probeEvery = int(n)
	return s, nil
}

func parseSessionOptions(rt *sobek.Runtime, v sobek.Value) (clientOptions, int, error) {
	var o clientOptions
	if common.IsNullish(v) {
		return o, 0, errors.New("chat.session(opts): opts is required, with at least url and user")
	}
	obj := v.ToObject(rt)
	for _, k := range obj.Keys() {
		if !contains(optionNames, k) {
			return o, 0, fmt.Errorf("chat.session: unknown option %q (known: %s)", k, strings.Join(optionNames, ", "))
		}
	}
	get := func(name string) (sobek.Value, bool) {
		val := obj.Get(name)
		return val, !common.IsNullish(val)
	}
	number := func(name string) (float64, bool, error) {
		val, ok := get(name)
		if !ok {
			return 0, false, nil
		}
		switch x := val.Export().(type) {
		case int64:
			return float64(x), true, nil
		case float64:
			if math.IsNaN(x) {
				return 0, false, fmt.Errorf("chat.session: %s is NaN", name)
			}
			return x, true, nil
		default:
			return 0, false, fmt.Errorf("chat.session: %s must be a number, got %q", name, val.String())
		}
	}
	epoch := func(name string) (time.Time, error) {
		ms, ok, err := number(name)
		if err != nil || !ok || math.IsInf(ms, 1) {
			return time.Time{}, err
		}
		if ms < 0 || math.IsInf(ms, -1) {
			return time.Time{}, fmt.Errorf("chat.session: %s must be epoch milliseconds, got %v", name, ms)
		}
		return time.UnixMicro(int64(ms * 1000)), nil
	}

	u, ok := get("url")
	if !ok {
		return o, 0, errors.New("chat.session: url is required, e.g. ws://127.0.0.1:18080/ws")
	}
	o.url = u.String()
	if parsed, err := url.Parse(o.url); err != nil || (parsed.Scheme != "ws" && parsed.Scheme != "wss") {
		return o, 0, fmt.Errorf("chat.session: url must be a ws:// or wss:// URL, got %q", o.url)
	}
	if err := parseTransport(obj, &o); err != nil {
		return o, 0, err
	}

	clients := 1
	if n, ok, err := number("clients"); err != nil {
		return o, 0, err
	} else if ok {
		if n != math.Trunc(n) || n < 1 || n > maxClients {
			return o, 0, fmt.Errorf("chat.session: clients must be an integer from 1 to %d, got %v", maxClients, n)
		}
		clients = int(n)
	}

	user, ok := get("user")
	if !ok {
		return o, 0, errors.New("chat.session: user is required (1-64 characters)")
	}
	o.user = user.String()
	longest := o.user
	if clients > 1 {
		longest += "-" + strconv.Itoa(clients)
	}
	if err := checkUser(longest); err != nil {
		return o, 0, err
	}

	o.room = "public"
	if room, ok := get("room"); ok {
		o.room = room.String()
		if err := checkName("room", o.room); err != nil {
			return o, 0, err
		}
	}

	if changes, ok := get("rateChanges"); ok {
		var pairs [][]float64
		if err := rt.ExportTo(changes, &pairs); err != nil {
			return o, 0, fmt.Errorf("chat.session: rateChanges must be [[epochMs, chatsPerSecond], ...]: %v", err)
		}
		if len(pairs) > maxRateChanges {
			return o, 0, fmt.Errorf("chat.session: at most %d rateChanges, got %d", maxRateChanges, len(pairs))
		}
		for i, p := range pairs {
			if len(p) != 2 || p[0] <= 0 || p[1] < 0 || math.IsInf(p[1], 0) || math.IsNaN(p[1]) ||
				(i > 0 && p[0] < pairs[i-1][0]) {
				return o, 0, fmt.Errorf("chat.session: rateChanges[%d] must be [epochMs, chatsPerSecond >= 0], ascending, got %v", i, p)
			}
			o.rateChanges = append(o.rateChanges, rateChange{at: time.UnixMicro(int64(p[0] * 1000)), chatsPerSecond: p[1]})
		}
	}

	if n, ok, err := number("chats"); err != nil {
		return o, 0, err
	} else if ok {
		if n != math.Trunc(n) || n < 0 || n > 1_000_000 {
			return o, 0, fmt.Errorf("chat.session: chats must be an integer from 0 to 1000000, got %v", n)
		}
		o.chats = int(n)
	}
	if n, ok, err := number("chatsPerSecond"); err != nil {
		return o, 0, err
	} else if ok {
		if n < 0 || math.IsInf(n, 0) {
			return o, 0, fmt.Errorf("chat.session: chatsPerSecond must be a finite number >= 0, got %v", n)
		}
		o.chatsPerSecond = n
	}
	var err error
	if o.stopChatAt, err = epoch("stopChatAt"); err != nil {
		return o, 0, err
	}
	if o.leaveAt, err = epoch("leaveAt"); err != nil {
		return o, 0, err
	}
	if n, ok, err := number("stayMs"); err != nil {
		return o, 0, err
	} else if ok {
		if n < 0 || math.IsInf(n, 0) {
			return o, 0, fmt.Errorf("chat.session: stayMs must be a finite number >= 0, got %v", n)
		}
		o.stay, o.hasStay = time.Duration(n*float64(time.Millisecond)), true
	}
	if n, ok, err := number("instance"); err != nil {
		return o, 0, err
	} else if ok {
		if n != math.Trunc(n) || n < 0 || n > maxInstances {
			return o, 0, fmt.Errorf("chat.session: instance must be an integer from 0 to %d, got %v", maxInstances, n)
		}
		o.instance = int(n)
	}
	if o.hasStay && !o.leaveAt.IsZero() {
		return o, 0, errors.New("chat.session: give leaveAt or stayMs, not both")
	}
	if n, ok, err := number("pingEveryMs"); err != nil {
		return o, 0, err
	} else if ok {
		if n < 0 || n > 3_600_000 || math.IsInf(n, 0) {
			return o, 0, fmt.Errorf("chat.session: pingEveryMs must be from 0 to 3600000, got %v", n)
		}
		o.pingEvery = time.Duration(n * float64(time.Millisecond))
	}
	if n, ok, err := number("churnPerMinute"); err != nil {
		return o, 0, err
	} else if ok {
		if n < 0 || n > 1 {
			return o, 0, fmt.Errorf("chat.session: churnPerMinute must be a share from 0 to 1, got %v", n)
		}
		if n > 0 && o.leaveAt.IsZero() {
			return o, 0, errors.New("chat.session: churnPerMinute needs leaveAt: a churning client joins again until then")
		}
		o.churnPerMinute = n
	}
	if o.sources, err = parseSources(rt, obj); err != nil {
		return o, 0, err
	}
	if o.slow, err = parseSlow(rt, obj); err != nil {
		return o, 0, err
	}
	if o.slow != nil && (o.chats > 0 || o.chatsPerSecond > 0 || len(o.rateChanges) > 0) {
		return o, 0, errors.New("chat.session: a slow session never chats: no chats, chatsPerSecond or rateChanges with slow")
	}
	return o, clients, nil
}

// parseSources reads sourceAddresses: IPv4 loopback addresses (127.0.0.0/8)
// to connect from, each connection from the next in turn; none given: the
// default eight.
func parseSources(rt *sobek.Runtime, obj *sobek.Object) ([]net.IP, error) {
	v := obj.Get("sourceAddresses")
	if common.IsNullish(v) {
		return nil, nil
	}
	var names []string
	if err := rt.ExportTo(v, &names); err != nil {
		return nil, fmt.Errorf("chat.session: sourceAddresses must be a list of IPv4 loopback addresses: %v", err)
	}
	if len(names) > maxSources {
		return nil, fmt.Errorf("chat.session: at most %d sourceAddresses, got %d", maxSources, len(names))
	}
	ips := make([]net.IP, 0, len(names))
	for _, name := range names {
		ip := net.ParseIP(name).To4()
		if ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("chat.session: sourceAddresses: %q is not an IPv4 loopback address (127.0.0.0/8)", name)
		}
		ips = append(ips, ip)
	}
	return ips, nil
}

// checkUser: the protocol's 1-64 characters, and nothing that would need
// escaping in JSON or break the byte scan of chats (a user named exactly
// "chat" would look like a chat's type).
func checkUser(user string) error {
	n := utf8.RuneCountInString(user)
	if n < 1 || n > 64 || !utf8.ValidString(user) {
		return fmt.Errorf("chat.session: user must be 1-64 characters (with clients > 1, including the -N suffix), got %q", user)
	}
	return checkName("user", user)
}

// checkName: nothing in a user or room name that would need escaping in
// JSON or break the byte scan of chats.
func checkName(what, name string) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > 64 || !utf8.ValidString(name) {
		return fmt.Errorf("chat.session: %s must be 1-64 characters, got %q", what, name)
	}
	if name == "chat" || strings.ContainsAny(name, `"\`) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return fmt.Errorf("chat.session: %s %q may not be \"chat\" or contain quotes, backslashes or control characters", what, name)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
