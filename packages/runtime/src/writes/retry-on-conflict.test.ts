import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '@loopwright/core/testing';
import { KubeApiError } from '@loopwright/client';
import { defaultRetry, retryOnConflict } from './retry-on-conflict.ts';

const conflict = (n: number): KubeApiError =>
  new KubeApiError(`conflict ${n}`, { status: 409, reason: 'Conflict' });

/** An attempt that rejects with the given errors in turn, then resolves with 'done'. */
function failing(...errors: Error[]): { attempt: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    attempt: () => {
      const error = errors[calls++];
      return error === undefined ? Promise.resolve('done') : Promise.reject(error);
    },
    calls: () => calls,
  };
}

describe('retryOnConflict', () => {
  it('defaults to client-go retry.DefaultRetry', () => {
    assert.deepEqual(defaultRetry, { steps: 5, durationMs: 10, factor: 1.0, jitter: 0.1 });
  });

  it('resolves with the first attempt that succeeds, without waiting', async () => {
    const clock = new FakeClock();
    const { attempt, calls } = failing();
    assert.equal(await retryOnConflict(attempt, { clock }), 'done');
    assert.equal(calls(), 1);
    assert.deepEqual(clock.armedDelays, []);
  });

  it('retries a conflict after a jittered 10 ms wait, and resolves with the retry', async () => {
    const clock = new FakeClock();
    const { attempt, calls } = failing(conflict(1), conflict(2));
    const result = retryOnConflict(attempt, { clock, backoff: { ...defaultRetry, random: () => 0.5 } });
    await settle();
    assert.equal(calls(), 1, 'the retry waits for the delay');
    await clock.advance(10.5);
    await clock.advance(10.5);
    assert.equal(await result, 'done');
    assert.equal(calls(), 3);
    assert.deepEqual(
      clock.armedDelays,
      [10.5, 10.5],
      'Factor 1.0: the delay does not grow; jitter adds 10% * 0.5',
    );
  });

  it('rethrows anything but a conflict at once, without retrying', async () => {
    const clock = new FakeClock();
    const alreadyExists = new KubeApiError('exists', { status: 409, reason: 'AlreadyExists' });
    const { attempt, calls } = failing(alreadyExists);
    await assert.rejects(retryOnConflict(attempt, { clock }), (error) => error === alreadyExists);
    assert.equal(calls(), 1);
    assert.deepEqual(clock.armedDelays, []);
  });

  it('rethrows a non-conflict that follows a conflict', async () => {
    const clock = new FakeClock({ autoAdvance: true });
    const boom = new Error('boom');
    const { attempt, calls } = failing(conflict(1), boom);
    await assert.rejects(retryOnConflict(attempt, { clock }), (error) => error === boom);
    assert.equal(calls(), 2);
  });

  it('gives up after steps attempts with the last conflict, having waited steps - 1 times', async () => {
    const clock = new FakeClock({ autoAdvance: true });
    const conflicts = [1, 2, 3, 4, 5, 6].map(conflict);
    const { attempt, calls } = failing(...conflicts);
    await assert.rejects(retryOnConflict(attempt, { clock }), (error) => error === conflicts[4]);
    assert.equal(calls(), 5);
    assert.equal(clock.armedDelays.length, 4);
    for (const delay of clock.armedDelays)
      assert.ok(delay >= 10 && delay <= 11, `${delay} within 10 ms + 10%`);
  });

  it('follows a custom backoff: its steps and its growing delays', async () => {
    const clock = new FakeClock({ autoAdvance: true });
    const { attempt, calls } = failing(conflict(1), conflict(2), conflict(3));
    const backoff = { steps: 3, durationMs: 100, factor: 2 };
    await assert.rejects(
      retryOnConflict(attempt, { clock, backoff }),
      (error) => (error as Error).message === 'conflict 3',
    );
    assert.equal(calls(), 3);
    assert.deepEqual(clock.armedDelays, [100, 200]);
  });

  it('one step means one attempt and no retry', async () => {
    const clock = new FakeClock();
    const { attempt, calls } = failing(conflict(1));
    await assert.rejects(retryOnConflict(attempt, { clock, backoff: { ...defaultRetry, steps: 1 } }));
    assert.equal(calls(), 1);
    assert.deepEqual(clock.armedDelays, []);
  });

  it('an abort during the wait rejects with the last conflict and tries no more', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const first = conflict(1);
    const { attempt, calls } = failing(first, conflict(2));
    const result = retryOnConflict(attempt, { clock, signal: controller.signal });
    await settle();
    controller.abort();
    await assert.rejects(result, (error) => error === first);
    assert.equal(calls(), 1);
  });

  it('refuses a backoff with fewer than one step', async () => {
    const { attempt, calls } = failing();
    for (const steps of [0, -1, 1.5, Infinity]) {
      await assert.rejects(retryOnConflict(attempt, { backoff: { ...defaultRetry, steps } }), RangeError);
    }
    assert.equal(calls(), 0);
  });
});
