import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BASE_BACKOFF_MS, MAX_BACKOFF_MS, SendBackoff } from './send-backoff.ts';

const t0 = new Date('2026-11-22T10:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

describe('SendBackoff', () => {
  it('doubles the wait with every failure up to the maximum, and forgets on success', () => {
    const backoff = new SendBackoff();
    assert.equal(backoff.remainingMs('ns/a', 'uid-a', t0), 0);
    const waits = Array.from({ length: 12 }, () => backoff.failed('ns/a', 'uid-a', t0));
    assert.deepEqual(waits.slice(0, 3), [BASE_BACKOFF_MS, 2 * BASE_BACKOFF_MS, 4 * BASE_BACKOFF_MS]);
    assert.equal(waits.at(-1), MAX_BACKOFF_MS);
    assert.equal(backoff.remainingMs('ns/a', 'uid-a', at(1000)), MAX_BACKOFF_MS - 1000);
    assert.equal(backoff.remainingMs('ns/a', 'uid-a', at(MAX_BACKOFF_MS)), 0);
    backoff.forget('ns/a');
    assert.equal(backoff.failed('ns/a', 'uid-a', t0), BASE_BACKOFF_MS, 'starts over');
  });

  it('a fixed wait (401) as given; a recreated object (new uid) does not inherit the wait', () => {
    const backoff = new SendBackoff();
    assert.equal(backoff.failed('ns/a', 'uid-a', t0, 300_000), 300_000);
    assert.equal(backoff.remainingMs('ns/a', 'uid-a', at(100_000)), 200_000);
    assert.equal(backoff.remainingMs('ns/a', 'uid-b', at(100_000)), 0);
    assert.equal(backoff.failed('ns/a', 'uid-b', t0), BASE_BACKOFF_MS);
  });

  it('a fixed wait counts as a failure: the next exponential wait is the second step', () => {
    const backoff = new SendBackoff();
    backoff.failed('ns/a', 'uid-a', t0, 300_000);
    assert.equal(backoff.failed('ns/a', 'uid-a', t0), 2 * BASE_BACKOFF_MS);
  });
});
