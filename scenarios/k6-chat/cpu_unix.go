//go:build unix

package chat

import "syscall"

// processCPUNs is the user+system CPU time of this process (getrusage
// RUSAGE_SELF): every goroutine, the JS VUs and the native clients alike.
func processCPUNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
