import { realClock, type Clock } from '@loopwright/core';
import { DelayingQueueImpl, type DelayingQueue } from './delaying-queue.ts';
import { QueueMetrics, type WorkqueueMetricsProvider } from './metrics.ts';
import { checkPriority, NORMAL_PRIORITY, type Ordering } from './priority.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.ts';

/** client-go's `RateLimitingInterface`: a {@link DelayingQueue} with per-key retry backoff. */
export interface RateLimitingQueue<K extends string> extends DelayingQueue<K> {
  /**
   * `addAfter(key, rateLimiter.when(key), priority)`: records a failure of `key` and adds it after the
   * limiter's delay. Counts in the retries metric (through `addAfter`).
   * @throws RangeError if `priority` is not a safe integer (and records no failure).
   */
  addRateLimited(key: K, priority?: number): void;
  /** Clears `key`'s failure history in the rate limiter; call it when `key` succeeded. */
  forget(key: K): void;
  /** Failures the rate limiter recorded for `key` since it was last forgotten. */
  numRequeues(key: K): number;
}

/** Options of {@link newRateLimitingQueue}; all optional. */
export interface RateLimitingQueueOptions<K extends string = string> {
  /** Queue name, the metrics' `name` label. Metrics are recorded only when `name` and `metricsProvider` are set. */
  readonly name?: string;
  /** Receives the queue's metrics; see {@link WorkqueueMetricsProvider}. */
  readonly metricsProvider?: WorkqueueMetricsProvider;
  /** Time source for delays, metrics and the default rate limiter; defaults to {@link realClock}. */
  readonly clock?: Clock;
  /** Backoff policy; defaults to {@link defaultControllerRateLimiter} on `clock`. */
  readonly rateLimiter?: RateLimiter<K>;
  /**
   * Which ready key is handed out first. `'fifo'` (default, client-go's order): the oldest, whatever the
   * priorities. `'priority'` (controller-runtime's priority queue): the oldest of the highest priority.
   * Both track priorities the same way and report them in `QueueItem`.
   */
  readonly ordering?: Ordering;
}

class RateLimitingQueueImpl<K extends string> extends DelayingQueueImpl<K> implements RateLimitingQueue<K> {
  readonly #rateLimiter: RateLimiter<K>;

  constructor(
    clock: Clock,
    metrics: QueueMetrics<K> | undefined,
    rateLimiter: RateLimiter<K>,
    ordering: Ordering,
  ) {
    super(clock, metrics, ordering);
    this.#rateLimiter = rateLimiter;
  }

  addRateLimited(key: K, priority: number = NORMAL_PRIORITY): void {
    checkPriority(priority, key); // before when(), which records a failure
    this.addAfter(key, this.#rateLimiter.when(key), priority);
  }

  forget(key: K): void {
    this.#rateLimiter.forget(key);
  }

  /** Also forgets the failures of every key dropped: a key given up starts afresh if it comes back. */
  override discard(drop: (key: K) => boolean): number {
    return super.discard((key) => {
      if (!drop(key)) return false;
      this.#rateLimiter.forget(key);
      return true;
    });
  }

  numRequeues(key: K): number {
    return this.#rateLimiter.numRequeues(key);
  }
}

/**
 * Creates a work queue with client-go semantics: deduplicating FIFO (or priority order, see
 * `ordering`), delayed adds (one timer for all keys) and rate-limited retries. With `name` and `metricsProvider` it also records the workqueue
 * metrics and refreshes the unfinished-work gauges every 500 ms on an unref'd timer until shutdown.
 */
export function newRateLimitingQueue<K extends string = string>(
  options: RateLimitingQueueOptions<K> = {},
): RateLimitingQueue<K> {
  const clock = options.clock ?? realClock;
  const { name, metricsProvider, ordering = 'fifo' } = options;
  // As client-go: an unnamed queue has no metrics, since its series could not be told apart.
  const metrics =
    metricsProvider !== undefined && name !== undefined && name !== ''
      ? new QueueMetrics<K>(metricsProvider, name, clock, ordering)
      : undefined;
  return new RateLimitingQueueImpl(
    clock,
    metrics,
    options.rateLimiter ?? defaultControllerRateLimiter<K>(clock),
    ordering,
  );
}
