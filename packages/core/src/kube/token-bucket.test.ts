import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../fake-clock.ts';
import { TokenBucket } from './token-bucket.ts';

describe('TokenBucket', () => {
  it('lets a burst through at once, then releases waiters one per 1/qps in call order', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 20, burst: 3, clock });
    const released: number[] = [];
    const waits = Array.from({ length: 6 }, (_, i) =>
      bucket.wait().then((waitedMs) => {
        released.push(i);
        return waitedMs;
      }),
    );
    await clock.advance(0);
    assert.deepEqual(released, [0, 1, 2]);
    await clock.advance(49);
    assert.deepEqual(released, [0, 1, 2]);
    await clock.advance(1);
    assert.deepEqual(released, [0, 1, 2, 3]);
    await clock.advance(100);
    assert.deepEqual(released, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(await Promise.all(waits), [0, 0, 0, 50, 100, 150]);
  });

  it('refills continuously up to burst, never beyond', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 2, clock });
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), false);
    await clock.advance(100);
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), false);
    await clock.advance(60_000);
    assert.equal(bucket.tokens, 2);
  });

  it('an aborted wait rejects with the signal reason and returns its token', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 1, burst: 1, clock });
    await bucket.wait();
    const controller = new AbortController();
    const waiting = bucket.wait(controller.signal);
    controller.abort(new Error('request cancelled'));
    await assert.rejects(waiting, /request cancelled/);
    assert.equal(clock.pendingTimers(), 0);
    // The cancelled reservation is given back: the next caller waits 1 s, not 2 s.
    const next = bucket.wait();
    await clock.advance(1000);
    assert.equal(await next, 1000);
    await assert.rejects(bucket.wait(AbortSignal.abort(new Error('already'))), /already/);
  });

  it('rejects invalid settings', () => {
    assert.throws(() => new TokenBucket({ qps: 0, burst: 1 }), RangeError);
    assert.throws(() => new TokenBucket({ qps: 1, burst: 0 }), RangeError);
    assert.throws(() => new TokenBucket({ qps: 1, burst: 1.5 }), RangeError);
  });
});
