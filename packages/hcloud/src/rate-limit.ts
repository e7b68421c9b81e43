/** The project's request budget as the last response's `RateLimit-*` headers reported it. */
export interface RateLimitState {
  /** `RateLimit-Limit`: bucket size (3600 by default). */
  readonly limit: number;
  /** `RateLimit-Remaining`: requests left right now. */
  readonly remaining: number;
  /**
   * `RateLimit-Reset` in Unix milliseconds: when the bucket will be FULL again (not when the next request is
   * allowed; the bucket refills continuously, 1 request per second by default).
   */
  readonly resetAt: number;
  /** The client clock's time (Unix ms) when the headers were read. */
  readonly observedAt: number;
}

function nonNegativeInt(raw: string | null): number | undefined {
  if (raw === null || !/^\s*\d+\s*$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Reads the three `RateLimit-*` headers; `undefined` unless all three are present and numeric. */
export function parseRateLimit(
  headers: { get(name: string): string | null },
  observedAt: number,
): RateLimitState | undefined {
  const limit = nonNegativeInt(headers.get('ratelimit-limit'));
  const remaining = nonNegativeInt(headers.get('ratelimit-remaining'));
  const reset = nonNegativeInt(headers.get('ratelimit-reset'));
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return { limit, remaining, resetAt: reset * 1000, observedAt };
}

/**
 * How long to wait after a 429 before the next request can succeed, or `undefined` when the headers do not
 * say (the caller falls back to exponential backoff).
 *
 * Waiting for `RateLimit-Reset` itself would mean waiting until the bucket is full, up to an hour with the
 * default limits. The bucket refills linearly from `remaining` to `limit` by `resetAt`, so one token arrives
 * every `(resetAt - now) / (limit - remaining)` ms: wait that long (1 s with the default 3600/h).
 */
export function rateLimitWaitMs(state: RateLimitState | undefined, now: number): number | undefined {
  if (state === undefined) return undefined;
  const untilFull = state.resetAt - now;
  const missing = state.limit - state.remaining;
  if (untilFull <= 0 || missing <= 0) return undefined;
  return Math.ceil(untilFull / missing);
}
