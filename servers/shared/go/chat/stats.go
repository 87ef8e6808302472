// stats.go owns the cumulative counters served at /stats and printed on exit.
// Every counter is an atomic, updated outside the hub's lock.
package chat

import (
	"encoding/json"
	"sync/atomic"
	"time"
)

// Stats is the server's counters. The hub and Member.Handle update most of
// them; the server's client updates those only the socket knows about
// (connections, frames in, binary frames, deliveries, bytes written).
type Stats struct {
	server  string
	started time.Time

	ConnectionsCurrent atomic.Int64
	ConnectionsTotal   atomic.Int64
	Joins              atomic.Int64
	FramesIn           atomic.Int64
	ChatIn             atomic.Int64
	ChatAccepted       atomic.Int64
	Deliveries         atomic.Int64
	DroppedRatelimit   atomic.Int64
	DroppedSlow        atomic.Int64
	Malformed          atomic.Int64
	// BytesWritten is the WebSocket frame bytes written to clients: after
	// permessage-deflate, before TLS (BatchConn counts them).
	BytesWritten atomic.Int64
}

// NewStats starts the uptime clock; server is the image tag /stats reports.
func NewStats(server string) *Stats {
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
	BytesWritten       int64  `json:"bytes_written"`
}

// JSON is a snapshot of the counters. Each is read atomically; the set is not
// one instant, which is fine for counters that only grow.
func (s *Stats) JSON() []byte {
	b, err := json.Marshal(statsJSON{
		Server:             s.server,
		UptimeMs:           time.Since(s.started).Milliseconds(),
		ConnectionsCurrent: s.ConnectionsCurrent.Load(),
		ConnectionsTotal:   s.ConnectionsTotal.Load(),
		Joins:              s.Joins.Load(),
		FramesIn:           s.FramesIn.Load(),
		ChatIn:             s.ChatIn.Load(),
		ChatAccepted:       s.ChatAccepted.Load(),
		Deliveries:         s.Deliveries.Load(),
		DroppedRatelimit:   s.DroppedRatelimit.Load(),
		DroppedSlow:        s.DroppedSlow.Load(),
		Malformed:          s.Malformed.Load(),
		BytesWritten:       s.BytesWritten.Load(),
	})
	if err != nil {
		panic(err) // a struct of strings and integers always marshals
	}
	return b
}
