import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
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

  it('serves waiters by priority, in call order within one, each at the rate', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock });
    await bucket.wait();
    const released: string[] = [];
    const queue = (label: string, priority?: 'critical' | 'normal' | 'background'): Promise<number> =>
      bucket.wait(undefined, priority).then((waitedMs) => {
        released.push(label);
        return waitedMs;
      });
    const waits = [
      queue('background-1', 'background'),
      queue('normal-1'),
      queue('normal-2', 'normal'),
      queue('critical-1', 'critical'),
    ];
    assert.deepEqual(
      [bucket.waiting('critical'), bucket.waiting('normal'), bucket.waiting('background')],
      [1, 2, 1],
    );
    await clock.advance(100);
    assert.deepEqual(released, ['critical-1']);
    // A critical request arriving behind queued normal ones still goes first.
    waits.push(queue('critical-2', 'critical'));
    await clock.advance(100);
    assert.deepEqual(released, ['critical-1', 'critical-2']);
    await clock.advance(300);
    assert.deepEqual(released, ['critical-1', 'critical-2', 'normal-1', 'normal-2', 'background-1']);
    assert.deepEqual(await Promise.all(waits), [500, 300, 400, 100, 100]);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('tryTake never takes a token a waiter is queued for', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 2, clock });
    await bucket.wait();
    await bucket.wait();
    const queued = bucket.wait(undefined, 'background');
    await clock.advance(100);
    assert.equal(await queued, 100);
    const next = bucket.wait();
    await clock.advance(99);
    assert.equal(bucket.tryTake(), false, 'the refilling token belongs to the waiter');
    await clock.advance(1);
    assert.equal(await next, 100);
  });

  it('an aborted waiter leaves the queue without delaying the others', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock });
    await bucket.wait();
    const controller = new AbortController();
    const cancelled = bucket.wait(controller.signal, 'critical');
    const kept = bucket.wait();
    controller.abort(new Error('gone'));
    await assert.rejects(cancelled, /gone/);
    assert.equal(bucket.waiting('critical'), 0);
    await clock.advance(100);
    assert.equal(await kept, 100);
  });

  it('refuses an unknown priority', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 1, burst: 1, clock });
    await bucket.wait();
    await assert.rejects(bucket.wait(undefined, 'urgent' as 'critical'), /unknown request priority "urgent"/);
  });

  it('rejects invalid settings', () => {
    assert.throws(() => new TokenBucket({ qps: 0, burst: 1 }), RangeError);
    assert.throws(() => new TokenBucket({ qps: 1, burst: 0 }), RangeError);
    assert.throws(() => new TokenBucket({ qps: 1, burst: 1.5 }), RangeError);
  });
});
