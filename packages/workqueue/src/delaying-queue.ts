import type { Clock, Timer } from '@loopwright/core';
import { DelayHeap } from './delay-heap.ts';
import type { QueueMetrics } from './metrics.ts';
import { checkPriority, NORMAL_PRIORITY, type Ordering } from './priority.ts';
import { Queue, type WorkQueue } from './queue.ts';

/** client-go's `DelayingInterface`: a {@link WorkQueue} that can add a key later. */
export interface DelayingQueue<K extends string> extends WorkQueue<K> {
  /**
   * Adds `key` at `priority` (default {@link NORMAL_PRIORITY}) once `delayMs` milliseconds have passed.
   * `delayMs <= 0` is a plain `add`. A key already waiting keeps the earliest ready time (a shorter delay
   * moves it earlier, a longer one is ignored) and the highest priority.
   * Waiting is independent of the queue state: a key added directly meanwhile is processed now AND added
   * again when its delay ends (that add dedups if the key is still dirty then, keeping the higher priority).
   * No-op after shutdown; shutdown drops all waiting keys. Counts in the retries metric.
   * @throws RangeError if `delayMs` is NaN or `priority` is not a safe integer.
   */
  addAfter(key: K, delayMs: number, priority?: number): void;
}

/**
 * All waiting keys share one min-heap and one timer armed for the earliest: 100k delayed keys cost one
 * Node timer, not 100k. The timer is ref'd (waiting keys are pending work and keep the process alive)
 * until shutdown clears it.
 */
export class DelayingQueueImpl<K extends string> extends Queue<K> implements DelayingQueue<K> {
  protected readonly clock: Clock;
  readonly #waiting = new DelayHeap<K>();
  #timer: Timer | undefined;
  #timerReadyAt = Infinity;

  constructor(clock: Clock, metrics: QueueMetrics<K> | undefined, ordering: Ordering) {
    super(metrics, ordering);
    this.clock = clock;
  }

  addAfter(key: K, delayMs: number, priority: number = NORMAL_PRIORITY): void {
    if (Number.isNaN(delayMs)) throw new RangeError(`addAfter(${JSON.stringify(key)}): delayMs is NaN`);
    checkPriority(priority, key);
    if (this.shuttingDown()) return;
    this.metrics?.retry();
    if (delayMs <= 0) {
      this.add(key, priority);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    if (this.#waiting.schedule(key, readyAt, priority) && readyAt < this.#timerReadyAt) this.#arm(readyAt);
  }

  /**
   * Also drops the waiting keys for which `drop` is true (counted among those returned). The timer stays
   * armed for the earliest key that was waiting: when it fires it finds nothing due and re-arms.
   */
  override discard(drop: (key: K) => boolean): number {
    return super.discard(drop) + this.#waiting.removeWhere(drop);
  }

  // A hook rather than a shutDown() override, which would also have to let a second shutDown() through
  // to end a pending shutDownWithDrain().
  protected override onShutDown(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerReadyAt = Infinity;
    this.#waiting.clear();
  }

  #arm(readyAt: number): void {
    this.#timer?.cancel();
    this.#timerReadyAt = readyAt;
    this.#timer = this.clock.setTimer(this.#fire, Math.max(0, readyAt - this.clock.now()));
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#timerReadyAt = Infinity;
    const now = this.clock.now();
    for (let due = this.#waiting.popDue(now); due !== undefined; due = this.#waiting.popDue(now)) {
      this.add(due.key, due.priority);
    }
    // Also re-arms when the timer fired before the earliest key was due (millisecond rounding).
    // A key delayed by Infinity never fires, so it gets no timer that would hold the process open.
    const next = this.#waiting.peekReadyAt();
    if (next !== undefined && next < Infinity) this.#arm(next);
  };
}
