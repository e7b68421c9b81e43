import type { Clock, Timer } from '@loopwright/core';

/**
 * Creates the metrics of one named queue. `@loopwright/metrics` implements it with prom-client and
 * client-go's metric names (`workqueue_depth`, `workqueue_adds_total`, ...); any structural match works.
 * Each method is called once per queue, with the queue's `name`.
 */
export interface WorkqueueMetricsProvider {
  /** Keys waiting to be handed out (`workqueue_depth`). */
  newDepthMetric(name: string): { inc(): void; dec(): void };
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

/** client-go's `defaultQueueMetrics`: the bookkeeping behind the provider's instruments. */
export class QueueMetrics<K> {
  readonly #clock: Clock;
  readonly #depth: { inc(): void; dec(): void };
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

  constructor(provider: WorkqueueMetricsProvider, name: string, clock: Clock) {
    this.#clock = clock;
    this.#depth = provider.newDepthMetric(name);
    this.#adds = provider.newAddsMetric(name);
    this.#latency = provider.newLatencyMetric(name);
    this.#workDuration = provider.newWorkDurationMetric(name);
    this.#unfinishedWorkSeconds = provider.newUnfinishedWorkSecondsMetric(name);
    this.#longestRunningProcessor = provider.newLongestRunningProcessorSecondsMetric(name);
    this.#retries = provider.newRetriesMetric(name);
    this.#armRefresh();
  }

  add(key: K): void {
    this.#adds.inc();
    this.#depth.inc();
    if (!this.#addTimes.has(key)) this.#addTimes.set(key, this.#clock.now());
  }

  get(key: K): void {
    const now = this.#clock.now();
    this.#depth.dec();
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
