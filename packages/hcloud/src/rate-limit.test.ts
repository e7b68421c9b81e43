import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRateLimit, rateLimitWaitMs } from './rate-limit.ts';

describe('parseRateLimit', () => {
  it('reads the three headers case-insensitively, Reset from Unix seconds to ms', () => {
    const headers = new Headers({
      'ratelimit-limit': '3600',
      'RateLimit-Remaining': '12',
      'RATELIMIT-RESET': '1767225600',
    });
    assert.deepEqual(parseRateLimit(headers, 5), {
      limit: 3600,
      remaining: 12,
      resetAt: 1_767_225_600_000,
      observedAt: 5,
    });
  });

  it('is undefined unless all three are present and non-negative integers', () => {
    const complete = {
      'RateLimit-Limit': '3600',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '1767225600',
    };
    for (const [name, bad] of [
      ['RateLimit-Limit', undefined],
      ['RateLimit-Remaining', '-1'],
      ['RateLimit-Reset', '1.5'],
      ['RateLimit-Limit', 'abc'],
    ] as const) {
      const headers: Record<string, string> = { ...complete };
      if (bad === undefined) Reflect.deleteProperty(headers, name);
      else headers[name] = bad;
      assert.equal(parseRateLimit(new Headers(headers), 0), undefined, `${name}=${String(bad)}`);
    }
  });
});

describe('rateLimitWaitMs', () => {
  const now = 1_000_000;
  it('waits for the next token of a linearly refilling bucket, not for the full reset', () => {
    assert.equal(
      rateLimitWaitMs({ limit: 3600, remaining: 0, resetAt: now + 3_600_000, observedAt: now }, now),
      1000,
    );
    assert.equal(
      rateLimitWaitMs({ limit: 10, remaining: 0, resetAt: now + 5_000, observedAt: now }, now),
      500,
    );
    assert.equal(
      rateLimitWaitMs({ limit: 10, remaining: 6, resetAt: now + 2_001, observedAt: now }, now),
      501,
    );
  });

  it('is undefined when the headers cannot tell (absent, reset past, bucket full)', () => {
    assert.equal(rateLimitWaitMs(undefined, now), undefined);
    assert.equal(rateLimitWaitMs({ limit: 10, remaining: 0, resetAt: now, observedAt: now }, now), undefined);
    assert.equal(
      rateLimitWaitMs({ limit: 10, remaining: 10, resetAt: now + 1000, observedAt: now }, now),
      undefined,
    );
  });
});
