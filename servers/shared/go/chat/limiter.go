// limiter.go owns the per-connection token bucket of docs/protocol.md:
// capacity 10, full when the connection opens, refilled continuously at
// 10 tokens/s. Only chat spends tokens.
package chat

import "time"

const (
	bucketCapacity        = 10
	bucketRefillPerSecond = 10
	// nanoToken is one token in the bucket's integer unit: counting in
	// billionths of a token keeps the refill exact (100 ms buys exactly one).
	nanoToken = int64(time.Second)
)

// limiter is used by its connection's reader only, so it needs no lock.
type limiter struct {
	now    func() time.Time // injectable so tests need no sleeping
	tokens int64            // in nanoTokens
	last   time.Time
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, tokens: bucketCapacity * nanoToken, last: now()}
}

// allow spends one token if there is one.
func (l *limiter) allow() bool {
	now := l.now()
	if elapsed := now.Sub(l.last); elapsed > 0 {
		// A full refill takes one second; capping first keeps the product small.
		elapsed = min(elapsed, time.Second*bucketCapacity/bucketRefillPerSecond)
		l.tokens = min(bucketCapacity*nanoToken, l.tokens+int64(elapsed)*bucketRefillPerSecond)
		l.last = now
	}
	if l.tokens < nanoToken {
		return false
	}
	l.tokens -= nanoToken
	return true
}
