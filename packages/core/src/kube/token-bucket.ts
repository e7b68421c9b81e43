import { realClock, sleep, type Clock } from '../clock.ts';

export interface TokenBucketOptions {
  /** Tokens added per second (sustained rate). */
  qps: number;
  /** Bucket size: how many requests may go at once after a quiet period. Also the initial fill. */
  burst: number;
  clock?: Clock;
}

/**
 * A token bucket with reservation semantics, like `golang.org/x/time/rate` behind client-go's
 * `flowcontrol.NewTokenBucketRateLimiter`:
 *
 * - the bucket starts full (`burst` tokens) and refills continuously at `qps`, never beyond `burst`;
 * - {@link wait} takes a token at once; when none is left the balance goes negative and the caller
 *   sleeps until its token will have been refilled. Waiters are therefore served in call order (FIFO)
 *   and exactly at the rate, without polling and with one timer per waiter;
 * - an aborted wait returns its token, so cancelled requests do not slow down later ones;
 * - the wait's timer does not keep the process alive: a request nobody else waits for is no work.
 *
 * {@link tryTake} is the non-blocking variant (`TryAccept`): it takes a whole token or refuses.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #lastRefill: number;

  constructor(options: TokenBucketOptions) {
    if (!(options.qps > 0)) throw new RangeError(`qps must be > 0, got ${options.qps}`);
    if (!Number.isInteger(options.burst) || options.burst < 1) {
      throw new RangeError(`burst must be an integer >= 1, got ${options.burst}`);
    }
    this.qps = options.qps;
    this.burst = options.burst;
    this.#clock = options.clock ?? realClock;
    this.#tokens = options.burst;
    this.#lastRefill = this.#clock.now();
  }

  /** Tokens available now (negative while callers wait for reserved tokens). */
  get tokens(): number {
    this.#refill();
    return this.#tokens;
  }

  /**
   * Takes one token, waiting for it if necessary. Resolves with the milliseconds waited (0 when a token
   * was available). Rejects with `signal.reason` if `signal` aborts first; the token is returned.
   */
  async wait(signal?: AbortSignal): Promise<number> {
    signal?.throwIfAborted();
    this.#refill();
    this.#tokens -= 1;
    if (this.#tokens >= 0) return 0;
    const delayMs = (-this.#tokens / this.qps) * 1000;
    await sleep(this.#clock, delayMs, signal, { unref: true });
    if (signal?.aborted === true) {
      this.#tokens += 1;
      throw signal.reason;
    }
    return delayMs;
  }

  /** Takes a token if one is available now; never waits. */
  tryTake(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsedMs = Math.max(0, now - this.#lastRefill);
    this.#lastRefill = now;
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsedMs / 1000) * this.qps);
  }
}
