import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RateLimitState } from '@loopwright/hcloud';
import { RequestBudget } from './budget.ts';

/** A bucket of 3600 refilling 1/s: `remaining` tokens observed at t=0. */
function setup(remaining: number): { budget: RequestBudget; clock: { t: number } } {
  const clock = { t: 1_000_000 };
  const state: RateLimitState = {
    limit: 3600,
    remaining,
    resetAt: clock.t + (3600 - remaining) * 1000,
    observedAt: clock.t,
  };
  return { budget: new RequestBudget({ rateLimit: () => state, now: () => clock.t }), clock };
}

describe('RequestBudget', () => {
  it('no headers seen yet: go', () => {
    assert.equal(new RequestBudget({ rateLimit: () => undefined }).delayMs('refresh', 10), 0);
  });

  it('a full bucket: everything goes, bursts included', () => {
    const { budget } = setup(3600);
    assert.equal(budget.delayMs('refresh', 10), 0);
    budget.spend('urgent', 10);
    assert.equal(budget.delayMs('urgent', 10), 0);
  });

  it('below half: refreshes wait until the bucket refilled above half', () => {
    const { budget, clock } = setup(1790);
    assert.equal(budget.delayMs('refresh', 10), 20_000); // 20 tokens short at 1 s each
    clock.t += 20_000;
    assert.equal(budget.delayMs('refresh', 10), 0);
  });

  it('below half: urgent work is paced to half the refill rate', () => {
    const { budget, clock } = setup(1000);
    assert.equal(budget.delayMs('urgent', 10), 0);
    budget.spend('urgent', 10);
    assert.equal(budget.delayMs('urgent', 10), 20_000); // 10 tokens at 1 s / 0.5
    clock.t += 20_000;
    assert.equal(budget.delayMs('urgent', 10), 0);
  });

  it('below the 10 % reserve: urgent work waits for the reserve too', () => {
    const { budget } = setup(300);
    assert.equal(budget.delayMs('urgent', 10), 70_000); // needs 360 + 10
    assert.ok(budget.delayMs('refresh', 10) > 1_000_000);
  });

  it('reads the refill rate from RateLimit-Reset (a scaled-up bucket)', () => {
    const state: RateLimitState = { limit: 3600, remaining: 1790, resetAt: 181_000, observedAt: 0 }; // 10 tokens/s
    const budget = new RequestBudget({ rateLimit: () => state, now: () => 0 });
    assert.equal(budget.msPerToken(state), 100);
    assert.equal(budget.delayMs('refresh', 10), 2000);
  });
});

describe('RequestBudget: unpaced follow-ups', () => {
  it('skip the pacing but not the reserve', () => {
    const state: RateLimitState = { limit: 3600, remaining: 1000, resetAt: 2_600_000, observedAt: 0 };
    const budget = new RequestBudget({ rateLimit: () => state, now: () => 0 });
    budget.spend('urgent', 10);
    assert.ok(budget.delayMs('urgent', 1) > 0);
    assert.equal(budget.delayMs('urgent', 1, { unpaced: true }), 0);
    const low: RateLimitState = { ...state, remaining: 100, resetAt: 3_500_000 };
    assert.ok(
      new RequestBudget({ rateLimit: () => low, now: () => 0 }).delayMs('urgent', 1, { unpaced: true }) > 0,
    );
  });
});
