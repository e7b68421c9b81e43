import { Fifo } from './fifo.ts';
import type { QueueMetrics } from './metrics.ts';
import { PriorityOrder } from './priority-order.ts';
import { checkPriority, NORMAL_PRIORITY, type Ordering } from './priority.ts';
import { FifoOrder, type ReadyOrder } from './ready-order.ts';

/**
 * What `get()` hands out: a key to process with the priority it was handed out with (the highest of the
 * adds that queued it, so a worker can re-add the key at the priority it had), or the news that the queue
 * is shut down and drained.
 */
export type QueueItem<K extends string> =
  | { readonly key: K; readonly priority: number; readonly shutdown: false }
  | { readonly key: undefined; readonly shutdown: true };

/**
 * client-go's `workqueue.Interface`: a line of keys that deduplicates waiting keys and never hands one key
 * to two workers at once, in FIFO or priority order (the queue's `ordering` option).
 *
 * A key is *dirty* from `add` until a worker gets it, and *processing* from `get` until `done`. Adds of a
 * dirty key only raise its priority; an add during processing marks the key dirty again, and `done` puts
 * it back in line: any number of adds during processing collapse into exactly one re-run, by a single
 * worker, at the highest priority among them.
 */
export interface WorkQueue<K extends string> {
  /**
   * Marks `key` dirty at `priority` (an integer, default {@link NORMAL_PRIORITY}). No-op after shutdown.
   * When `key` is already dirty the adds metric is not incremented and the key keeps the higher priority:
   * a higher one moves it to the back of that priority's line (priority order), an equal or lower one
   * changes nothing. A key being processed is not queued now but when its worker calls `done`.
   * @throws RangeError if `priority` is not a safe integer.
   */
  add(key: K, priority?: number): void;
  /**
   * Hands out the next ready key (the oldest; in priority order the oldest of the highest priority) and
   * marks it processing; waits while none is ready. Waiting getters are served in call order. Resolves
   * `{ shutdown: true }` once the queue is shut down and has no ready keys (keys queued before shutdown
   * are still handed out first). Never rejects.
   */
  get(): Promise<QueueItem<K>>;
  /**
   * Synchronous `get()`: the same result when a key is ready or the queue is shut down and drained,
   * `undefined` when `get()` would wait. Lets a worker loop skip a promise on the hot path:
   * `const item = queue.tryGet() ?? (await queue.get())`.
   */
  tryGet(): QueueItem<K> | undefined;
  /**
   * Ends processing of `key`. If it was added meanwhile it goes to the back of the line, at the highest
   * priority of those adds (also after shutdown, so it is not lost to a draining worker). No-op for a key
   * that is not processing.
   */
  done(key: K): void;
  /**
   * Drops every dirty key for which `drop(key)` is true: a ready key leaves the line, and a key being
   * processed that was added meanwhile is no longer put back in line by its `done` (the key itself
   * stays processing until then). `drop` is called once per dirty key (and, in a delaying queue, once
   * per waiting key), never for a key processing and not added again. Returns how many were dropped (in
   * a delaying queue, a key both dirty and waiting counts twice). Not in client-go: a sharded controller gives up the keys of objects another replica now
   * owns, which would otherwise wait for it (and their memory) until handed out.
   */
  discard(drop: (key: K) => boolean): number;
  /** Keys ready to hand out (not those processing, nor delayed ones). */
  len(): number;
  /**
   * Stops accepting keys and wakes every waiting `get()` with `{ shutdown: true }`. Ready keys are still
   * handed out by later `get()` calls. Idempotent. Also resolves every pending `shutDownWithDrain()`
   * without waiting for keys still processing, as client-go's `ShutDown` after `ShutDownWithDrain`.
   */
  shutDown(): void;
  /**
   * `shutDown()`, then resolves once no key is processing (each handed-out key got `done`), or once
   * `shutDown()` is called (to stop waiting for a stuck worker, e.g. after a timeout). Keys still ready are
   * not waited for: workers are expected to keep calling `get()` until it reports shutdown.
   */
  shutDownWithDrain(): Promise<void>;
  /** True after `shutDown()` or `shutDownWithDrain()`. */
  shuttingDown(): boolean;
}

const shutdownItem: QueueItem<never> = Object.freeze({ key: undefined, shutdown: true });

/**
 * The basic queue: `queue` (the ready line), `dirty` and `processing` sets, as in client-go; `dirty` also
 * holds each dirty key's priority.
 */
export class Queue<K extends string> implements WorkQueue<K> {
  protected readonly metrics: QueueMetrics<K> | undefined;
  readonly #ready: ReadyOrder<K>;
  /** Dirty keys and the highest priority each was added with since it was last handed out. */
  readonly #dirty = new Map<K, number>();
  readonly #processing = new Set<K>();
  /** Pending `get()` calls; only non-empty while `#ready` is empty. */
  readonly #getters = new Fifo<(item: QueueItem<K>) => void>();
  #drainWaiters: (() => void)[] = [];
  #shuttingDown = false;

  constructor(metrics: QueueMetrics<K> | undefined, ordering: Ordering) {
    this.metrics = metrics;
    this.#ready = ordering === 'priority' ? new PriorityOrder<K>() : new FifoOrder<K>();
  }

  add(key: K, priority: number = NORMAL_PRIORITY): void {
    checkPriority(priority, key);
    if (this.#shuttingDown) return;
    const dirtyAt = this.#dirty.get(key);
    if (dirtyAt !== undefined) {
      if (priority > dirtyAt) this.#raise(key, dirtyAt, priority);
      return;
    }
    this.#dirty.set(key, priority);
    this.metrics?.add(key, priority);
    if (this.#processing.has(key)) return;
    this.#enqueue(key, priority);
  }

  get(): Promise<QueueItem<K>> {
    const item = this.tryGet();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve) => {
      this.#getters.push(resolve);
    });
  }

  tryGet(): QueueItem<K> | undefined {
    const key = this.#ready.shift();
    if (key !== undefined) return this.#handOut(key);
    return this.#shuttingDown ? shutdownItem : undefined;
  }

  done(key: K): void {
    // client-go would re-queue a dirty key on a stray done() and so queue it twice; ignore it instead.
    if (!this.#processing.delete(key)) return;
    this.metrics?.done(key);
    const dirtyAt = this.#dirty.get(key);
    if (dirtyAt !== undefined) this.#enqueue(key, dirtyAt);
    if (this.#processing.size === 0) this.#endDrain();
  }

  discard(drop: (key: K) => boolean): number {
    const fromLine = new Set<K>();
    let dropped = 0;
    for (const [key, priority] of this.#dirty) {
      if (!drop(key)) continue;
      // Deleting the entry being visited is safe: a Map's iteration goes on with the next one.
      this.#dirty.delete(key);
      this.metrics?.discard(key, priority);
      if (!this.#processing.has(key)) fromLine.add(key);
      dropped++;
    }
    if (fromLine.size > 0) this.#ready.remove(fromLine);
    return dropped;
  }

  len(): number {
    return this.#ready.size;
  }

  shutDown(): void {
    this.#shutDown();
    // client-go: "ShutDown can be called after ShutDownWithDrain to force ShutDownWithDrain to stop
    // waiting", so a drain with a timeout can give up on a stuck worker. Also when already shut down:
    // that shutdown is the drain's own.
    this.#endDrain();
  }

  shutDownWithDrain(): Promise<void> {
    // Not through shutDown(): that would end the drains of earlier shutDownWithDrain() calls.
    this.#shutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#drainWaiters.push(resolve);
    });
  }

  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Runs once, at the first shutdown call, before waiting getters are woken: subclasses drop their own
   * pending work here (both shutDown() and shutDownWithDrain() come through it).
   */
  protected onShutDown(): void {}

  #shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.onShutDown();
    this.metrics?.stop();
    // Getters only wait while nothing is ready, so all of them see a drained queue.
    for (let resolve = this.#getters.shift(); resolve !== undefined; resolve = this.#getters.shift()) {
      resolve(shutdownItem);
    }
  }

  /** Resolves every pending `shutDownWithDrain()`. */
  #endDrain(): void {
    if (this.#drainWaiters.length === 0) return;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Puts a dirty, not processing key in line, or straight into the hands of the longest waiting getter. */
  #enqueue(key: K, priority: number): void {
    const getter = this.#getters.shift();
    if (getter === undefined) this.#ready.push(key, priority);
    else getter(this.#handOut(key));
  }

  /** A dirty key added again with a higher priority: in line, it moves; processing, `done` will use it. */
  #raise(key: K, from: number, to: number): void {
    this.#dirty.set(key, to);
    this.metrics?.raise(from, to);
    if (!this.#processing.has(key)) this.#ready.raise(key, to);
  }

  #handOut(key: K): QueueItem<K> {
    const priority = this.#dirty.get(key) as number;
    this.#dirty.delete(key);
    this.#processing.add(key);
    this.metrics?.get(key, priority);
    return { key, priority, shutdown: false };
  }
}
