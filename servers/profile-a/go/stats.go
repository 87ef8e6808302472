// stats.go owns the cumulative counters served at /stats and printed on exit.
// Every counter is an atomic, updated outside the hub's lock.
package main

import (
	"encoding/json"
	"sync/atomic"
	"time"
)

type Stats struct {
	server  string
	started time.Time

	connectionsCurrent atomic.Int64
	connectionsTotal   atomic.Int64
	joins              atomic.Int64
	framesIn           atomic.Int64
	chatIn             atomic.Int64
	chatAccepted       atomic.Int64
	deliveries         atomic.Int64
	droppedRatelimit   atomic.Int64
	droppedSlow        atomic.Int64
	malformed          atomic.Int64
}

func newStats(server string) *Stats {
	return &Stats{server: server, started: time.Now()}
}

// statsJSON is the /stats object, in the field order docs/protocol.md shows.
type statsJSON struct {
	Server             string `json:"server"`
	UptimeMs           int64  `json:"uptime_ms"`
	ConnectionsCurrent int64  `json:"connections_current"`
	ConnectionsTotal   int64  `json:"connections_total"`
	Joins              int64  `json:"joins"`
	FramesIn           int64  `json:"frames_in"`
	ChatIn             int64  `json:"chat_in"`
	ChatAccepted       int64  `json:"chat_accepted"`
	Deliveries         int64  `json:"deliveries"`
	DroppedRatelimit   int64  `json:"dropped_ratelimit"`
	DroppedSlow        int64  `json:"dropped_slow"`
	Malformed          int64  `json:"malformed"`
}

// JSON is a snapshot of the counters. Each is read atomically; the set is not
// one instant, which is fine for counters that only grow.
func (s *Stats) JSON() []byte {
	b, err := json.Marshal(statsJSON{
		Server:             s.server,
		UptimeMs:           time.Since(s.started).Milliseconds(),
		ConnectionsCurrent: s.connectionsCurrent.Load(),
		ConnectionsTotal:   s.connectionsTotal.Load(),
		Joins:              s.joins.Load(),
		FramesIn:           s.framesIn.Load(),
		ChatIn:             s.chatIn.Load(),
		ChatAccepted:       s.chatAccepted.Load(),
		Deliveries:         s.deliveries.Load(),
		DroppedRatelimit:   s.droppedRatelimit.Load(),
		DroppedSlow:        s.droppedSlow.Load(),
		Malformed:          s.malformed.Load(),
	})
	if err != nil {
		panic(err) // a struct of strings and integers always marshals
	}
	return b
}
