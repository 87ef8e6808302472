//go:build pprof

package main

// Profiling only: `go build -tags pprof` serves net/http/pprof on the address
// in WSCBENCH_PPROF (for example 127.0.0.1:6060), so that a CPU profile can be
// taken while a load drives the server:
//
//	go tool pprof -top -cum http://127.0.0.1:6060/debug/pprof/profile?seconds=8
//
// docs/fairness.md has the profiles taken this way. Never benchmark this build.

import (
	"log"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof on http.DefaultServeMux
	"os"
)

func init() {
	addr := os.Getenv("WSCBENCH_PPROF")
	if addr == "" {
		return
	}
	go func() { log.Printf("pprof: %v", http.ListenAndServe(addr, nil)) }()
}
