import { Backoff, realClock, type Clock } from '@loopwright/core';

/**
 * client-go's `TypedRateLimiter`: decides how long a key waits before its next retry.
 * `when` records a failure as a side effect; `forget` clears a key's history once it succeeded.
 */
export interface RateLimiter<K extends string = string> {
  /** Records a failure of `key` and returns the delay in milliseconds (>= 0) before retrying it. */
  when(key: K): number;
  /** Clears `key`'s failure history (it succeeded, or it is gone). */
  forget(key: K): void;
  /** Failures recorded for `key` since it was last forgotten. */
  numRequeues(key: K): number;
}

/**
 * Per-key exponential backoff: the n-th failure since the last `forget` (n = 0, 1, ...) waits
 * `baseMs * 2^n`, capped at `maxMs`. Defaults give 5, 10, 20, 40 ms, ... 1000 s. Each failing key steps
 * its own core `Backoff` (factor 2, no step limit, cap `maxMs`), which stops growing at the cap, so any
 * number of failures neither overflows nor costs more than one step.
 * @throws RangeError unless `0 <= baseMs <= maxMs < Infinity`.
 */
export function exponentialFailureRateLimiter<K extends string = string>(
  baseMs = 5,
  maxMs = 1_000_000,
): RateLimiter<K> {
  // Checked here, not left to the first when() inside a worker: an infinite base throws in Backoff, and an
  // infinite cap lets the delay double to Infinity (failure 1023 at 5 ms), after which the key never runs.
  if (!(baseMs >= 0 && baseMs < Infinity)) {
    throw new RangeError(`exponentialFailureRateLimiter: baseMs must be finite and >= 0, got ${baseMs}`);
  }
  if (!(maxMs >= baseMs && maxMs < Infinity)) {
    throw new RangeError(
      `exponentialFailureRateLimiter: maxMs must be finite and >= baseMs (${baseMs}), got ${maxMs}`,
    );
  }
  const failures = new Map<K, { count: number; readonly backoff: Backoff }>();
  return {
    when(key) {
      let entry = failures.get(key);
      if (entry === undefined) {
        entry = {
          count: 0,
          backoff: new Backoff({ durationMs: baseMs, factor: 2, steps: Infinity, capMs: maxMs }),
        };
        failures.set(key, entry);
      }
      entry.count++;
      return entry.backoff.step();
    },
    forget(key) {
      failures.delete(key);
    },
    numRequeues(key) {
      return failures.get(key)?.count ?? 0;
    },
  };
}

/** Options for {@link bucketRateLimiter}. */
export interface BucketRateLimiterOptions {
  /** Tokens added per second (> 0, with a finite `1000 / qps`; Infinity disables limiting). */
  readonly qps: number;
  /** Bucket size: how many keys may go without delay after a quiet period (safe integer >= 1). */
  readonly burst: number;
  /** Time source; defaults to {@link realClock}. */
  readonly clock?: Pick<Clock, 'now'>;
}

/**
 * One token bucket shared by all keys (an overall retry rate, not per key), with the reservation
 * semantics of golang.org/x/time/rate as used by client-go's `BucketRateLimiter`: the bucket starts full,
 * refills at `qps`, and every `when` takes a token now or reserves the next one, returning the wait
 * until that reserved token exists. So a burst of calls gets `burst` zero delays, then delays spaced
 * `1000 / qps` ms apart. `forget` is a no-op and `numRequeues` is always 0.
 * @throws RangeError for qps <= 0 or burst < 1 (x/time/rate would then wait forever), for a qps so small
 * that one token's wait `1000 / qps` is Infinity, and for a burst above `Number.MAX_SAFE_INTEGER`.
 */
export function bucketRateLimiter<K extends string = string>(
  options: BucketRateLimiterOptions,
): RateLimiter<K> {
  const { qps, burst } = options;
  // A qps of 1e-310 would make the second reservation wait Infinity: that key would never be retried.
  if (!(qps > 0 && 1000 / qps < Infinity)) {
    throw new RangeError(`bucketRateLimiter: qps must be > 0 with a finite 1000 / qps, got ${qps}`);
  }
  // Above 2^53, taking a token (tokens - 1) rounds back to the same number: the bucket would never limit.
  if (!(Number.isSafeInteger(burst) && burst >= 1)) {
    throw new RangeError(`bucketRateLimiter: burst must be a safe integer >= 1, got ${burst}`);
  }
  const clock = options.clock ?? realClock;
  let tokens = burst;
  let last = clock.now();
  return {
    when() {
      if (qps === Infinity) return 0;
      const now = clock.now();
      // As x/time/rate: a clock that went backwards refills nothing.
      const elapsedMs = Math.max(0, now - last);
      last = now;
      tokens = Math.min(burst, tokens + (elapsedMs * qps) / 1000) - 1;
      return tokens < 0 ? (-tokens * 1000) / qps : 0;
    },
    forget() {},
    numRequeues() {
      return 0;
    },
  };
}

/**
 * Combines limiters: `when` asks every limiter (each records the failure) and returns the longest delay;
 * `forget` forgets in all; `numRequeues` is the largest count.
 */
export function maxOfRateLimiter<K extends string = string>(...limiters: RateLimiter<K>[]): RateLimiter<K> {
  return {
    when(key) {
      let delay = 0;
      for (const limiter of limiters) delay = Math.max(delay, limiter.when(key));
      return delay;
    },
    forget(key) {
      for (const limiter of limiters) limiter.forget(key);
    },
    numRequeues(key) {
      let requeues = 0;
      for (const limiter of limiters) requeues = Math.max(requeues, limiter.numRequeues(key));
      return requeues;
    },
  };
}

/**
 * client-go's `DefaultControllerRateLimiter`: the larger of per-key exponential backoff (5 ms doubling
 * to 1000 s) and an overall token bucket (10 qps, burst 100).
 * @param clock time source of the bucket; defaults to {@link realClock}.
 */
export function defaultControllerRateLimiter<K extends string = string>(
  clock?: Pick<Clock, 'now'>,
): RateLimiter<K> {
  return maxOfRateLimiter<K>(
    exponentialFailureRateLimiter<K>(5, 1_000_000),
    bucketRateLimiter<K>(clock === undefined ? { qps: 10, burst: 100 } : { qps: 10, burst: 100, clock }),
  );
}
