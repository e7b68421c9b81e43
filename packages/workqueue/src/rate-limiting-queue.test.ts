import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import { newRateLimitingQueue, type RateLimiter } from './index.ts';

describe('rate limiting queue', () => {
  it('addRateLimited adds after the default limiter delay: 5 ms, then 10 ms', () => {
    const clock = new FakeClock();
    const queue = newRateLimitingQueue({ clock });
    queue.addRateLimited('a');
    clock.step(4);
    assert.equal(queue.len(), 0);
    clock.step(1);
    assert.deepEqual(queue.tryGet(), { key: 'a', priority: 0, shutdown: false });
    queue.done('a');
    assert.equal(queue.numRequeues('a'), 1);

    queue.addRateLimited('a');
    clock.step(9);
    assert.equal(queue.len(), 0);
    clock.step(1);
    assert.equal(queue.len(), 1);
    assert.equal(queue.numRequeues('a'), 2);
  });

  it('forget() resets the backoff', () => {
    const clock = new FakeClock();
    const queue = newRateLimitingQueue({ clock });
    queue.addRateLimited('a');
    queue.addRateLimited('a');
    queue.forget('a');
    assert.equal(queue.numRequeues('a'), 0);
    clock.step(5);
    assert.equal(queue.len(), 1, 'the first (5 ms) entry is still waiting and fires');
  });

  it('uses a custom rate limiter for delay, forget and numRequeues', () => {
    const calls: string[] = [];
    const rateLimiter: RateLimiter<'x'> = {
      when: (key) => {
        calls.push(`when ${key}`);
        return 0;
      },
      forget: (key) => calls.push(`forget ${key}`),
      numRequeues: (key) => {
        calls.push(`numRequeues ${key}`);
        return 7;
      },
    };
    const queue = newRateLimitingQueue<'x'>({ clock: new FakeClock(), rateLimiter });
    queue.addRateLimited('x');
    assert.equal(queue.len(), 1, 'a 0 ms delay is a plain add');
    queue.forget('x');
    assert.equal(queue.numRequeues('x'), 7);
    assert.deepEqual(calls, ['when x', 'forget x', 'numRequeues x']);
  });

  it('drops rate-limited keys on shutdown', () => {
    const clock = new FakeClock();
    const queue = newRateLimitingQueue({ clock });
    queue.addRateLimited('a');
    queue.shutDown();
    clock.step(1000);
    assert.deepEqual(queue.tryGet(), { key: undefined, shutdown: true });
  });
});
