import { realClock, type Clock, type Timer } from '@loopwright/core';

/**
 * Which waiting request gets the next token. A controller's requests are not equally urgent: the pod
 * create that follows a claim must not queue behind other objects' claims (the claim is already
 * recorded, and every millisecond between the two widens the window in which a crash loses the
 * command), and a diagnostic Event must never take a token a reconcile is waiting for.
 *
 * - `critical`: finishes work already begun (the write that follows a recorded claim);
 * - `normal`: everything else (the default);
 * - `background`: diagnostics (Events), served only when nothing else waits.
 */
export type RequestPriority = 'critical' | 'normal' | 'background';

const PRIORITIES: readonly RequestPriority[] = ['critical', 'normal', 'background'];

export interface TokenBucketOptions {
  /** Tokens added per second (sustained rate). */
  qps: number;
  /** Bucket size: how many requests may go at once after a quiet period. Also the initial fill. */
  burst: number;
  clock?: Clock;
}

interface Waiter {
  readonly queuedMs: number;
  readonly resolve: (waitedMs: number) => void;
  readonly detach: () => void;
}

/**
 * Refill arithmetic is floating point: a token due "now" may come out a hair short of 1. Anything this
 * close counts as whole, so no waiter is re-armed for a sub-nanosecond remainder.
 */
const WHOLE_TOKEN = 1 - 1e-9;

/**
 * A token bucket with the rate semantics of `golang.org/x/time/rate` behind client-go's
 * `flowcontrol.NewTokenBucketRateLimiter`, and a priority order among waiters:
 *
 * - the bucket starts full (`burst` tokens) and refills continuously at `qps`, never beyond `burst`;
 * - {@link wait} takes a token at once when one is there and nobody waits; otherwise the caller queues
 *   and is released when a token has refilled. Waiters are served highest {@link RequestPriority}
 *   first, in call order within a priority, exactly at the rate, with one timer for the whole queue;
 * - an aborted wait leaves the queue at once, so cancelled requests do not slow down later ones;
 * - the timer does not keep the process alive: a request nobody else waits for is no work.
 *
 * {@link tryTake} is the non-blocking variant (`TryAccept`): it takes a whole token or refuses, and
 * never takes one a waiter is queued for.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  readonly #queues = new Map<RequestPriority, Waiter[]>(PRIORITIES.map((p) => [p, []]));
  #waiting = 0;
  #timer: Timer | undefined;
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

  /** Tokens available now (fractions while one refills). */
  get tokens(): number {
    this.#refill();
    return this.#tokens;
  }

  /** Callers queued for a token, per priority. */
  waiting(priority: RequestPriority): number {
    return this.#queue(priority).length;
  }

  /**
   * Takes one token, waiting for it if necessary. Resolves with the milliseconds waited (0 when a token
   * was available). Rejects with `signal.reason` if `signal` aborts first; the caller leaves the queue.
   */
  wait(signal?: AbortSignal, priority: RequestPriority = 'normal'): Promise<number> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    this.#refill();
    if (this.#waiting === 0 && this.#tokens >= WHOLE_TOKEN) {
      this.#tokens -= 1;
      return Promise.resolve(0);
    }
    return new Promise<number>((resolve, reject) => {
      const queue = this.#queue(priority);
      const onAbort = (): void => {
        const index = queue.indexOf(waiter);
        if (index >= 0) {
          queue.splice(index, 1);
          this.#waiting -= 1;
          if (this.#waiting === 0) this.#disarm();
        }
        reject(signal?.reason as Error);
      };
      const waiter: Waiter = {
        queuedMs: this.#clock.now(),
        resolve,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      // A signal aborts once; a released waiter's listener is removed by `detach`.
      signal?.addEventListener('abort', onAbort);
      queue.push(waiter);
      this.#waiting += 1;
      this.#arm();
    });
  }

  /** Takes a token if one is available now and nobody waits for it; never waits. */
  tryTake(): boolean {
    this.#refill();
    if (this.#waiting > 0 || this.#tokens < WHOLE_TOKEN) return false;
    this.#tokens -= 1;
    return true;
  }

  #queue(priority: RequestPriority): Waiter[] {
    const queue = this.#queues.get(priority);
    if (queue === undefined) throw new TypeError(`unknown request priority "${priority}"`);
    return queue;
  }

  /**
   * One timer, due when the next whole token will have refilled. Both callers have just refilled, and
   * left less than a whole token: {@link wait} takes one itself when nobody waits (and the timer is
   * armed whenever somebody does), `#release` hands out every whole one.
   */
  #arm(): void {
    if (this.#timer !== undefined || this.#waiting === 0) return;
    const delayMs = ((1 - this.#tokens) / this.qps) * 1000;
    this.#timer = this.#clock.setTimer(
      () => {
        this.#release();
      },
      delayMs,
      { unref: true },
    );
  }

  #disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #release(): void {
    this.#timer = undefined;
    this.#refill();
    const now = this.#clock.now();
    for (const priority of PRIORITIES) {
      const queue = this.#queue(priority);
      while (queue.length > 0 && this.#tokens >= WHOLE_TOKEN) {
        const waiter = queue.shift() as Waiter;
        this.#tokens -= 1;
        this.#waiting -= 1;
        waiter.detach();
        waiter.resolve(now - waiter.queuedMs);
      }
    }
    this.#arm();
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsedMs = Math.max(0, now - this.#lastRefill);
    this.#lastRefill = now;
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsedMs / 1000) * this.qps);
  }
}
