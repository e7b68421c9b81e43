import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import {
  bucketRateLimiter,
  defaultControllerRateLimiter,
  exponentialFailureRateLimiter,
  maxOfRateLimiter,
  type RateLimiter,
} from './index.ts';

const whenTimes = (limiter: RateLimiter, key: string, times: number): number[] =>
  Array.from({ length: times }, () => limiter.when(key));

describe('exponentialFailureRateLimiter', () => {
  it('doubles from 5 ms per failure and caps at 1000 s by default', () => {
    const limiter = exponentialFailureRateLimiter();
    const delays = whenTimes(limiter, 'a', 22);
    assert.deepEqual(delays.slice(0, 5), [5, 10, 20, 40, 80]);
    assert.equal(delays[17], 5 * 2 ** 17); // 655.36 s, the last one under the cap
    assert.deepEqual(delays.slice(18), [1_000_000, 1_000_000, 1_000_000, 1_000_000]);
    assert.equal(limiter.numRequeues('a'), 22);
  });

  it('stays at the cap after thousands of failures (no overflow to Infinity or NaN)', () => {
    for (const baseMs of [5, 0]) {
      const limiter = exponentialFailureRateLimiter(baseMs, 1000);
      const delays = whenTimes(limiter, 'a', 3000);
      assert.equal(delays.at(-1), baseMs === 0 ? 0 : 1000);
      assert.ok(delays.every(Number.isFinite));
    }
  });

  it('tracks keys independently and forget() resets one key', () => {
    const limiter = exponentialFailureRateLimiter(1, 100);
    whenTimes(limiter, 'a', 3);
    assert.equal(limiter.when('b'), 1);
    limiter.forget('a');
    assert.equal(limiter.numRequeues('a'), 0);
    assert.equal(limiter.when('a'), 1);
    assert.equal(limiter.numRequeues('b'), 1);
  });

  it('rejects a negative base or a cap below the base', () => {
    assert.throws(() => exponentialFailureRateLimiter(-1, 10), RangeError);
    assert.throws(() => exponentialFailureRateLimiter(10, 5), RangeError);
  });

  it('rejects a non-finite base at construction, naming it, not at the first when()', () => {
    for (const baseMs of [Infinity, Number.NaN, -Infinity]) {
      assert.throws(() => exponentialFailureRateLimiter(baseMs, Infinity), {
        name: 'RangeError',
        message: /baseMs/,
      });
    }
  });

  it('rejects an infinite or NaN cap, which would let the delay double to Infinity', () => {
    for (const maxMs of [Infinity, Number.NaN]) {
      assert.throws(() => exponentialFailureRateLimiter(5, maxMs), { name: 'RangeError', message: /maxMs/ });
    }
    // The largest finite cap still keeps every delay finite.
    const delays = whenTimes(exponentialFailureRateLimiter(5, Number.MAX_VALUE), 'a', 1100);
    assert.ok(delays.every(Number.isFinite));
    assert.equal(delays.at(-1), Number.MAX_VALUE);
  });
});

describe('bucketRateLimiter', () => {
  it('lets a burst through, then spaces reservations 1/qps apart', () => {
    const clock = new FakeClock();
    const limiter = bucketRateLimiter({ qps: 10, burst: 100, clock });
    const delays = Array.from({ length: 103 }, (_, i) => limiter.when(`k${i}`));
    assert.deepEqual(delays.slice(0, 100), new Array(100).fill(0));
    assert.deepEqual(delays.slice(100), [100, 200, 300]);
  });

  it('refills at qps: a second later the 3 reserved tokens are repaid and 7 are free', () => {
    const clock = new FakeClock();
    const limiter = bucketRateLimiter({ qps: 10, burst: 100, clock });
    for (let i = 0; i < 103; i++) limiter.when('k');
    clock.step(1000);
    const delays = Array.from({ length: 8 }, () => limiter.when('k'));
    assert.deepEqual(delays, [0, 0, 0, 0, 0, 0, 0, 100]);
  });

  it('refills no further than burst', () => {
    const clock = new FakeClock();
    const limiter = bucketRateLimiter({ qps: 10, burst: 3, clock });
    clock.step(3_600_000);
    assert.deepEqual(whenTimes(limiter, 'k', 4), [0, 0, 0, 100]);
  });

  it('returns fractional waits for a partially refilled token', () => {
    const clock = new FakeClock();
    const limiter = bucketRateLimiter({ qps: 10, burst: 1, clock });
    assert.equal(limiter.when('k'), 0);
    clock.step(40);
    assert.ok(Math.abs(limiter.when('k') - 60) < 1e-9);
  });

  it('has no per-key state', () => {
    const limiter = bucketRateLimiter({ qps: 1, burst: 1, clock: new FakeClock() });
    limiter.when('a');
    assert.equal(limiter.numRequeues('a'), 0);
    limiter.forget('a');
    assert.equal(limiter.when('a'), 1000, 'forget does not refill the bucket');
  });

  it('never waits with qps = Infinity', () => {
    const limiter = bucketRateLimiter({ qps: Infinity, burst: 1, clock: new FakeClock() });
    assert.deepEqual(whenTimes(limiter, 'a', 5), [0, 0, 0, 0, 0]);
  });

  it('rejects qps <= 0 and burst < 1', () => {
    assert.throws(() => bucketRateLimiter({ qps: 0, burst: 1 }), RangeError);
    assert.throws(() => bucketRateLimiter({ qps: 1, burst: 0 }), RangeError);
    assert.throws(() => bucketRateLimiter({ qps: 1, burst: 1.5 }), RangeError);
  });

  it('rejects a qps whose token wait 1000 / qps is Infinity, naming qps', () => {
    for (const qps of [1e-310, Number.NaN, -Infinity]) {
      assert.throws(() => bucketRateLimiter({ qps, burst: 1 }), { name: 'RangeError', message: /qps/ });
    }
    const slowest = bucketRateLimiter({ qps: 1e-300, burst: 1, clock: new FakeClock() });
    assert.deepEqual(whenTimes(slowest, 'a', 2), [0, 1e303]);
  });

  it('rejects a non-finite or unsafe burst (tokens - 1 would not take a token), naming burst', () => {
    for (const burst of [Infinity, Number.NaN, 2 ** 60]) {
      assert.throws(() => bucketRateLimiter({ qps: 1, burst }), { name: 'RangeError', message: /burst/ });
    }
    const largest = bucketRateLimiter({ qps: 1, burst: Number.MAX_SAFE_INTEGER, clock: new FakeClock() });
    assert.equal(largest.when('a'), 0);
  });
});

describe('maxOfRateLimiter', () => {
  it('returns the longest delay, records the failure in every limiter, forgets in all', () => {
    const fast = exponentialFailureRateLimiter(1, 1000);
    const slow = exponentialFailureRateLimiter(10, 15);
    const limiter = maxOfRateLimiter(fast, slow);
    assert.deepEqual(whenTimes(limiter, 'a', 6), [10, 15, 15, 15, 16, 32]);
    assert.equal(fast.numRequeues('a'), 6);
    assert.equal(slow.numRequeues('a'), 6);
    assert.equal(limiter.numRequeues('a'), 6);
    limiter.forget('a');
    assert.equal(fast.numRequeues('a'), 0);
    assert.equal(slow.numRequeues('a'), 0);
  });

  it('reports the largest numRequeues', () => {
    const counting = exponentialFailureRateLimiter();
    const bucket = bucketRateLimiter({ qps: 10, burst: 100, clock: new FakeClock() });
    const limiter = maxOfRateLimiter(bucket, counting);
    whenTimes(limiter, 'a', 3);
    assert.equal(limiter.numRequeues('a'), 3);
  });

  it('waits 0 with no limiters', () => {
    assert.equal(maxOfRateLimiter().when('a'), 0);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('backs off one key exponentially from 5 ms', () => {
    const limiter = defaultControllerRateLimiter(new FakeClock());
    assert.deepEqual(whenTimes(limiter, 'a', 4), [5, 10, 20, 40]);
  });

  it('limits many distinct failing keys to 10 qps after a burst of 100', () => {
    const limiter = defaultControllerRateLimiter(new FakeClock());
    const delays = Array.from({ length: 102 }, (_, i) => limiter.when(`k${i}`));
    assert.deepEqual(delays.slice(0, 100), new Array(100).fill(5));
    assert.deepEqual(delays.slice(100), [100, 200]);
  });
});
