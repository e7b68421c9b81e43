/**
 * A wall clock for tests of `@loopwright/hcloud` and of the fake: `sleep(ms)` does not wait, it moves time
 * forward by `ms` and resolves, so backoff and 429 waits take no real time and are recorded in `sleeps`.
 * Structurally an `HcloudClock`; pass the same instance to the client and to `startFakeHcloud` so the fake's
 * token bucket refills while the client "waits".
 */
export class SteppingClock {
  #now: number;
  /** Every `sleep` duration requested, in order. */
  readonly sleeps: number[] = [];

  /** @param startMs the initial Unix time in milliseconds (default 2026-01-01T00:00:00Z). */
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  /** Unix time in milliseconds. */
  now(): number {
    return this.#now;
  }

  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`SteppingClock.advance: ms must be >= 0, got ${ms}`);
    this.#now += ms;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    this.sleeps.push(ms);
    this.#now += Math.max(0, ms);
    return Promise.resolve();
  }
}
