import type { Clock, Timer } from '@loopwright/core';
import type { Ordering } from './priority.ts';

/**
 * Creates the metrics of one named queue. `@loopwright/metrics` implements it with prom-client and
 * client-go's metric names (`workqueue_depth`, `workqueue_adds_total`, ...); any structural match works.
 * Each method is called once per queue, with the queue's `name`, except that a queue creates only one of
 * the two depth metrics.
 */
export interface WorkqueueMetricsProvider {
  /**
   * Keys waiting to be handed out (`workqueue_depth`), of a FIFO queue, or of a priority queue when the
   * provider has no {@link newDepthMetricWithPriority}.
   */
  newDepthMetric(name: string): { inc(): void; dec(): void };
  /**
   * Keys waiting to be handed out by priority (`workqueue_depth{priority}`), of a queue with
   * `ordering: 'priority'`; controller-runtime's `MetricsProviderWithPriority`. A key whose priority is
   * raised while it waits moves from one priority to the other (`dec(old)`, then `inc(new)`).
   */
  newDepthMetricWithPriority?(name: string): { inc(priority: number): void; dec(priority: number): void };
  /** Accepted adds; an add of a key that is already waiting is not counted (`workqueue_adds_total`). */
  newAddsMetric(name: string): { inc(): void };
  /** Seconds from the add that made a key dirty to the `get()` that handed it out (`workqueue_queue_duration_seconds`). */
  newLatencyMetric(name: string): { observe(seconds: number): void };
  /** Seconds from `get()` to `done()` (`workqueue_work_duration_seconds`). */
  newWorkDurationMetric(name: string): { observe(seconds: number): void };
  /** Sum of the ages of all keys being processed, refreshed every 500 ms (`workqueue_unfinished_work_seconds`). */
  newUnfinishedWorkSecondsMetric(name: string): { set(seconds: number): void };
  /** Age of the oldest key being processed, refreshed every 500 ms (`workqueue_longest_running_processor_seconds`). */
  newLongestRunningProcessorSecondsMetric(name: string): { set(seconds: number): void };
  /** `addAfter` calls, including those made by `addRateLimited` (`workqueue_retries_total`). */
  newRetriesMetric(name: string): { inc(): void };
}

/** How often the unfinished-work gauges are recomputed (client-go: 500 ms). */
const unfinishedWorkRefreshMs = 500;

/** Depth by priority; a depth without priorities (`newDepthMetric`) ignores the argument. */
interface DepthMetric {
  inc(priority: number): void;
  dec(priority: number): void;
}

/**
 * Calls `depth` without arguments: prom-client's `inc(value)` and `dec(value)` would take a priority for
 * the amount.
 */
function withoutPriority(depth: { inc(): void; dec(): void }): DepthMetric {
  return {
    inc: () => {
      depth.inc();
    },
    dec: () => {
      depth.dec();
    },
  };
}

/** client-go's `defaultQueueMetrics`: the bookkeeping behind the provider's instruments. */
export class QueueMetrics<K> {
  readonly #clock: Clock;
  readonly #depth: DepthMetric;
  /** Whether depth is counted per priority, so a raised key moves between series. */
  readonly #depthByPriority: boolean;
  readonly #adds: { inc(): void };
  readonly #latency: { observe(seconds: number): void };
  readonly #workDuration: { observe(seconds: number): void };
  readonly #unfinishedWorkSeconds: { set(seconds: number): void };
  readonly #longestRunningProcessor: { set(seconds: number): void };
  readonly #retries: { inc(): void };
  /** When each dirty key was first added; observed (and cleared) when it is handed out. */
  readonly #addTimes = new Map<K, number>();
  readonly #processingStartTimes = new Map<K, number>();
  #refreshTimer: Timer | undefined;

  constructor(provider: WorkqueueMetricsProvider, name: string, clock: Clock, ordering: Ordering) {
    this.#clock = clock;
    // As controller-runtime: by priority only for a priority queue and a provider that can; a FIFO queue
    // keeps the one series, whose priority label is empty.
    const byPriority = ordering === 'priority' ? provider.newDepthMetricWithPriority?.(name) : undefined;
    this.#depth = byPriority ?? withoutPriority(provider.newDepthMetric(name));
    this.#depthByPriority = byPriority !== undefined;
    this.#adds = provider.newAddsMetric(name);
    this.#latency = provider.newLatencyMetric(name);
    this.#workDuration = provider.newWorkDurationMetric(name);
    this.#unfinishedWorkSeconds = provider.newUnfinishedWorkSecondsMetric(name);
    this.#longestRunningProcessor = provider.newLongestRunningProcessorSecondsMetric(name);
    this.#retries = provider.newRetriesMetric(name);
    this.#armRefresh();
  }

  /** `key` became dirty at `priority`. */
  add(key: K, priority: number): void {
    this.#adds.inc();
    this.#depth.inc(priority);
    if (!this.#addTimes.has(key)) this.#addTimes.set(key, this.#clock.now());
  }

  /** A dirty key was added again at a higher priority. */
  raise(from: number, to: number): void {
    if (!this.#depthByPriority) return;
    this.#depth.dec(from);
    this.#depth.inc(to);
  }

  /** Dirty `key`, added at `priority`, was discarded before it was handed out. */
  discard(key: K, priority: number): void {
    this.#depth.dec(priority);
    this.#addTimes.delete(key);
  }

  /** `key` was handed out at `priority`. */
  get(key: K, priority: number): void {
    const now = this.#clock.now();
    this.#depth.dec(priority);
    this.#processingStartTimes.set(key, now);
    const addedAt = this.#addTimes.get(key);
    if (addedAt !== undefined) {
      this.#latency.observe((now - addedAt) / 1000);
      this.#addTimes.delete(key);
    }
  }

  done(key: K): void {
    const startedAt = this.#processingStartTimes.get(key);
    if (startedAt === undefined) return;
    this.#workDuration.observe((this.#clock.now() - startedAt) / 1000);
    this.#processingStartTimes.delete(key);
  }

  retry(): void {
    this.#retries.inc();
  }

  /** Stops the refresh timer; the queue calls it on shutdown. */
  stop(): void {
    this.#refreshTimer?.cancel();
    this.#refreshTimer = undefined;
  }

  #armRefresh(): void {
    // unref'd: metrics alone must never keep a process alive.
    this.#refreshTimer = this.#clock.setTimer(
      () => {
        this.#refreshUnfinishedWork();
        this.#armRefresh();
      },
      unfinishedWorkRefreshMs,
      { unref: true },
    );
  }

  #refreshUnfinishedWork(): void {
    const now = this.#clock.now();
    let total = 0;
    let oldest = 0;
    for (const startedAt of this.#processingStartTimes.values()) {
      const age = (now - startedAt) / 1000;
      total += age;
      if (age > oldest) oldest = age;
    }
    this.#unfinishedWorkSeconds.set(total);
    this.#longestRunningProcessor.set(oldest);
  }
}
