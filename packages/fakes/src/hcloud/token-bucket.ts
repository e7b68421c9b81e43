/**
 * The Hetzner Cloud rate limiter: a token bucket per project (default 3600 tokens, refilled 1 per second,
 * so bursts up to the full bucket are allowed). Time comes from the injected `now` so benchmarks can scale it.
 */
export class FakeHcloudTokenBucket {
  readonly limit: number;
  readonly refillPerSecond: number;
  readonly #now: () => number;
  #tokens: number;
  #refilledAt: number;

  constructor(limit: number, refillPerSecond: number, now: () => number) {
    if (!(Number.isInteger(limit) && limit >= 1))
      throw new RangeError(`rateLimit.limit must be an integer >= 1, got ${limit}`);
    if (!(refillPerSecond > 0))
      throw new RangeError(`rateLimit.refillPerSecond must be > 0, got ${refillPerSecond}`);
    this.limit = limit;
    this.refillPerSecond = refillPerSecond;
    this.#now = now;
    this.#tokens = limit;
    this.#refilledAt = now();
  }

  #refill(): void {
    const now = this.#now();
    const elapsedSeconds = Math.max(0, now - this.#refilledAt) / 1000;
    this.#tokens = Math.min(this.limit, this.#tokens + elapsedSeconds * this.refillPerSecond);
    this.#refilledAt = now;
  }

  /** Takes one token; `false` when the bucket is empty (the request gets 429). */
  take(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Empties or fills the bucket (tests: start a scenario already at the limit). */
  set(tokens: number): void {
    this.#refill();
    this.#tokens = Math.max(0, Math.min(this.limit, tokens));
  }

  /**
   * The three `RateLimit-*` headers as the real API sends them: whole remaining requests, and the Unix time
   * (seconds, rounded up) at which the bucket will be full again.
   */
  headers(): Record<string, string> {
    this.#refill();
    const secondsToFull = (this.limit - this.#tokens) / this.refillPerSecond;
    return {
      'RateLimit-Limit': String(this.limit),
      'RateLimit-Remaining': String(Math.floor(this.#tokens)),
      'RateLimit-Reset': String(Math.ceil(this.#now() / 1000 + secondsToFull)),
    };
  }
}
