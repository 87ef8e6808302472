//go:build !unix

package chat

// processCPUNs is unknown off unix: -1.
func processCPUNs() int64 { return -1 }
