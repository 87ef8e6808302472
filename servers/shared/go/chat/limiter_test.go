package chat

import (
	"testing"
	"time"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// emptyLimiter is a limiter that has just spent its first ten tokens.
func emptyLimiter() (*limiter, *fakeClock) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	l := newLimiter(clock.now)
	spend(l, bucketCapacity)
	return l, clock
}

// spendEvery tries one token every step, n times, and counts the successes.
func spendEvery(l *limiter, clock *fakeClock, step time.Duration, n int) (allowed int) {
	for range n {
		clock.advance(step)
		allowed += spend(l, 1)
	}
	return allowed
}

func spend(l *limiter, n int) (allowed int) {
	for range n {
		if l.allow() {
			allowed++
		}
	}
	return allowed
}

func TestLimiterStartsFullWithTenTokens(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	l := newLimiter(clock.now)
	if got := spend(l, 30); got != 10 {
		t.Fatalf("a burst of 30 passed %d, want 10", got)
	}
}

func TestLimiterRefillsOneTokenPerTenthOfASecond(t *testing.T) {
	l, clock := emptyLimiter()
	clock.advance(99 * time.Millisecond)
	if l.allow() {
		t.Fatal("a token appeared before 100 ms")
	}
	clock.advance(time.Millisecond)
	if !l.allow() {
		t.Fatal("no token after 100 ms")
	}
	if l.allow() {
		t.Fatal("two tokens after 100 ms")
	}
}

func TestLimiterRefillIsContinuous(t *testing.T) {
	l, clock := emptyLimiter()
	// Ten steps of 50 ms make 5 tokens even though no single step makes one.
	if allowed := spendEvery(l, clock, 50*time.Millisecond, 10); allowed != 5 {
		t.Fatalf("got %d tokens over 500 ms, want 5", allowed)
	}
}

func TestLimiterSustainsTenPerSecond(t *testing.T) {
	l, clock := emptyLimiter()
	// 10 s at 100 attempts/s.
	if allowed := spendEvery(l, clock, 10*time.Millisecond, 1000); allowed != 100 {
		t.Fatalf("got %d over 10 s, want 100", allowed)
	}
}

func TestLimiterCapsAtTen(t *testing.T) {
	l, clock := emptyLimiter()
	clock.advance(time.Hour)
	if got := spend(l, 30); got != 10 {
		t.Fatalf("after an hour idle a burst passed %d, want 10", got)
	}
}

func TestLimiterIgnoresAClockGoingBack(t *testing.T) {
	l, clock := emptyLimiter()
	clock.advance(-time.Second)
	if l.allow() {
		t.Fatal("a clock going back made a token")
	}
}
