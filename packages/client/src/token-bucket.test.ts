import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
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

describe('TokenBucket timers and settings', () => {
  it('one unref timer for the whole queue, none once the queue is empty', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock });
    await bucket.wait();
    const waits = [bucket.wait(), bucket.wait(), bucket.wait(undefined, 'critical')];
    assert.equal(clock.pendingTimers(), 1);
    assert.equal(clock.pendingTimers({ includeUnref: false }), 0, 'waiting does not keep the process alive');
    assert.deepEqual(clock.armedDelays, [100]);
    await clock.advance(100);
    assert.equal(clock.pendingTimers(), 1);
    await clock.advance(200);
    assert.deepEqual(await Promise.all(waits), [200, 300, 100]);
    assert.equal(clock.pendingTimers(), 0);
    assert.deepEqual(clock.armedDelays, [100, 100, 100]);
  });

  it('the last aborted waiter cancels the timer; the next one arms a new one', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock });
    await bucket.wait();
    const first = new AbortController();
    const second = new AbortController();
    const waits = [bucket.wait(first.signal), bucket.wait(second.signal)];
    first.abort(new Error('first gone'));
    await assert.rejects(waits[0] as Promise<number>, /first gone/);
    assert.equal(clock.pendingTimers(), 1, 'another waiter still waits');
    second.abort(new Error('second gone'));
    await assert.rejects(waits[1] as Promise<number>, /second gone/);
    assert.equal(clock.pendingTimers(), 0);
    await clock.advance(30);
    const next = bucket.wait();
    // 0.3 tokens left after 30 ms: 70 ms to a whole one, give or take floating point.
    assert.deepEqual(clock.armedDelays.map(Math.round), [100, 70]);
    await clock.advance(70);
    assert.equal(Math.round(await next), 70);
    assert.deepEqual(
      clock.armedDelays.length,
      2,
      'released on the first timer, not re-armed for a remainder',
    );
  });

  it('a released waiter no longer listens to its signal', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock });
    await bucket.wait();
    const controller = new AbortController();
    const waiting = bucket.wait(controller.signal);
    await clock.advance(100);
    assert.equal(await waiting, 100);
    assert.equal(
      getEventListeners(controller.signal, 'abort').length,
      0,
      'a long-lived signal collects no listeners',
    );
    controller.abort(new Error('too late'));
    const next = bucket.wait();
    await clock.advance(100);
    assert.equal(await next, 100, 'the late abort did not disturb the queue');
  });

  it('a token refills at qps between waits, as a fraction', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 4, burst: 2, clock });
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), true);
    await clock.advance(125);
    assert.equal(bucket.tokens, 0.5);
    assert.equal(bucket.tryTake(), false);
    const waiting = bucket.wait();
    assert.deepEqual(clock.armedDelays, [125]);
    await clock.advance(125);
    assert.equal(await waiting, 125);
  });

  it('works on the real clock by default', () => {
    const bucket = new TokenBucket({ qps: 1, burst: 2 });
    assert.deepEqual([bucket.qps, bucket.burst], [1, 2]);
    assert.equal(bucket.tryTake(), true);
  });

  it('says which setting is invalid', () => {
    assert.throws(() => new TokenBucket({ qps: -1, burst: 1 }), /^RangeError: qps must be > 0, got -1$/);
    assert.throws(() => new TokenBucket({ qps: NaN, burst: 1 }), /qps must be > 0, got NaN/);
    assert.throws(
      () => new TokenBucket({ qps: 1, burst: 2.5 }),
      /^RangeError: burst must be an integer >= 1, got 2.5$/,
    );
    assert.equal(new TokenBucket({ qps: 0.5, burst: 1 }).burst, 1);
  });
});

describe('TokenBucket: who gets a token that is due', () => {
  it('a caller arriving as the token falls due does not overtake the queued waiter', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock });
    await bucket.wait();
    const released: string[] = [];
    let tookAtOnce: boolean | undefined;
    let late: Promise<number> | undefined;
    // Armed before the bucket's timer, so it runs first at the same instant.
    clock.setTimer(() => {
      tookAtOnce = bucket.tryTake();
      late = bucket.wait().then((waitedMs) => {
        released.push('late');
        return waitedMs;
      });
    }, 100);
    const queued = bucket.wait().then((waitedMs) => {
      released.push('queued');
      return waitedMs;
    });
    await clock.advance(100);
    assert.equal(tookAtOnce, false);
    assert.deepEqual(released, ['queued']);
    await clock.advance(100);
    assert.deepEqual([await queued, await late], [100, 100]);
    assert.deepEqual(released, ['queued', 'late']);
  });

  it('a refill a hair short of a whole token counts as whole', async () => {
    const clock = new FakeClock();
    // One second at this rate refills exactly 1 - 1e-9 tokens.
    const rate = { qps: 1 - 1e-9, burst: 1, clock };
    const taking = new TokenBucket(rate);
    const waiting = new TokenBucket(rate);
    assert.equal(taking.tryTake(), true);
    assert.equal(await waiting.wait(), 0);
    await clock.advance(1000);
    assert.equal(taking.tryTake(), true);
    const next = waiting.wait();
    assert.equal(waiting.waiting('normal'), 0, 'taken at once');
    assert.equal(await next, 0);
    assert.deepEqual(clock.armedDelays, []);
  });

  it('a wait after a quiet period takes the refilled token at once', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock });
    await bucket.wait();
    await clock.advance(100);
    const waiting = bucket.wait();
    assert.equal(bucket.waiting('normal'), 0);
    assert.equal(await waiting, 0);
    assert.deepEqual(clock.armedDelays, []);
  });
});
