'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { Limiter } = require('../lib/limiter');

test('the bucket starts full with 10 tokens and refills at 10 per second', () => {
  let now = 0;
  const limiter = new Limiter(() => now);
  for (let i = 0; i < 10; i++) assert.ok(limiter.allow(), `token ${i}`);
  assert.equal(limiter.allow(), false);
  now += 100; // one token
  assert.ok(limiter.allow());
  assert.equal(limiter.allow(), false);
  now += 60_000; // never more than 10
  for (let i = 0; i < 10; i++) assert.ok(limiter.allow());
  assert.equal(limiter.allow(), false);
});
