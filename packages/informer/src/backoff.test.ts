import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff } from './backoff.ts';
import { FakeClock } from './test-helpers/fake-clock.ts';

describe('Backoff', () => {
  it('doubles from 800 ms and caps at 30 s (no jitter draw)', () => {
    const backoff = new Backoff(new FakeClock(), { random: () => 0 });
    const delays = Array.from({ length: 8 }, () => backoff.next());
    assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  });

  it('adds up to 100% jitter', () => {
    const backoff = new Backoff(new FakeClock(), { random: () => 0.5 });
    assert.deepEqual([backoff.next(), backoff.next()], [1200, 2400]);
    const max = new Backoff(new FakeClock(), { random: () => 0.999999 });
    assert.ok(max.next() <= 1600);
  });

  it('starts over after a healthy period without failures', async () => {
    const clock = new FakeClock();
    const backoff = new Backoff(clock, { random: () => 0 });
    backoff.next();
    backoff.next();
    await clock.advance(60_000);
    assert.equal(backoff.next(), 3200, 'one minute apart is still the same failure streak');
    await clock.advance(120_001);
    assert.equal(backoff.next(), 800);
  });
});
