// limiter.js owns the token bucket of docs/protocol.md: capacity 10, refilled at
// 10 tokens/s, full when the connection opens.
'use strict';

const CAPACITY = 10;
const REFILL_PER_SECOND = 10;

class Limiter {
  // now() returns milliseconds; injectable so tests need no sleeping.
  constructor(now = () => performance.now()) {
    this.now = now;
    this.tokens = CAPACITY;
    this.last = now();
  }

  // Takes a token if there is one.
  allow() {
    const now = this.now();
    const elapsed = now - this.last;
    if (elapsed > 0) {
      this.tokens = Math.min(CAPACITY, this.tokens + (elapsed / 1000) * REFILL_PER_SECOND);
      this.last = now;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

module.exports = { Limiter, CAPACITY, REFILL_PER_SECOND };
