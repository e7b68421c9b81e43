/**
 * @loopwright/workqueue against what a user would otherwise write: an array + Set that dedups waiting keys,
 * and one setTimeout per delayed key; and the two orderings (FIFO, priority) against each other. The naive queue does less (no processing set, so nothing keeps two
 * workers off one key or collapses adds during processing; no earliest-wins for delays; shutdown cannot
 * drop pending delays without tracking every handle): it is the floor, not a competitor.
 *
 *   pnpm run bench
 */
import { LOW_PRIORITY, NORMAL_PRIORITY, newRateLimitingQueue, type Ordering } from '../src/index.ts';

class NaiveQueue {
  readonly #items: string[] = [];
  readonly #waiting = new Set<string>();
  readonly #getters: ((key: string) => void)[] = [];

  add(key: string): void {
    if (this.#waiting.has(key)) return;
    const getter = this.#getters.shift();
    if (getter !== undefined) {
      getter(key);
      return;
    }
    this.#waiting.add(key);
    this.#items.push(key);
  }

  get(): Promise<string> {
    const key = this.#items.shift();
    if (key === undefined) return new Promise((resolve) => this.#getters.push(resolve));
    this.#waiting.delete(key);
    return Promise.resolve(key);
  }

  get size(): number {
    return this.#items.length;
  }

  addAfter(key: string, delayMs: number): void {
    setTimeout(() => {
      this.add(key);
    }, delayMs);
  }
}

const rows: { scenario: string; implementation: string; result: string }[] = [];

function keysFor(worker: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `default/worker-${worker}-object-${i}`);
}

/** One worker's add -> get -> done loop over its own keys. */
type Worker = (keys: string[], cycles: number) => Promise<void>;

const loopwrightTryGet = (ordering: Ordering) => (): Worker => {
  const queue = newRateLimitingQueue({ ordering });
  return async (keys, cycles) => {
    for (let i = 0; i < cycles; i++) {
      queue.add(keys[i & 1023] as string);
      const item = queue.tryGet() ?? (await queue.get());
      if (item.shutdown) return;
      queue.done(item.key);
    }
  };
};

const loopwrightGet = (): Worker => {
  const queue = newRateLimitingQueue();
  return async (keys, cycles) => {
    for (let i = 0; i < cycles; i++) {
      queue.add(keys[i & 1023] as string);
      const item = await queue.get();
      if (item.shutdown) return;
      queue.done(item.key);
    }
  };
};

const naiveGet = (): Worker => {
  const queue = new NaiveQueue();
  return async (keys, cycles) => {
    for (let i = 0; i < cycles; i++) {
      queue.add(keys[i & 1023] as string);
      await queue.get(); // no done(): nothing tracks processing
    }
  };
};

async function cyclesPerSecond(makeWorker: () => Worker, workers: number, total: number): Promise<number> {
  const worker = makeWorker();
  const keys = Array.from({ length: workers }, (_, w) => keysFor(w, 1024));
  const start = performance.now();
  await Promise.all(keys.map((own) => worker(own, total / workers)));
  return total / ((performance.now() - start) / 1000);
}

async function benchCycles(): Promise<void> {
  const total = 1_000_000;
  const candidates: [string, () => Worker][] = [
    ['loopwright: tryGet() ?? await get()', loopwrightTryGet('fifo')],
    ["loopwright ordering: 'priority', tryGet()", loopwrightTryGet('priority')],
    ['loopwright: await get()', loopwrightGet],
    ['naive array+Set: await get()', naiveGet],
  ];
  for (const workers of [1, 8]) {
    for (const [implementation, make] of candidates) {
      await cyclesPerSecond(make, workers, total / 10); // warm-up
      let best = 0;
      for (let run = 0; run < 3; run++) best = Math.max(best, await cyclesPerSecond(make, workers, total));
      rows.push({
        scenario: `add->get->done, ${workers} worker${workers > 1 ? 's' : ''}`,
        implementation,
        result: `${(best / 1e6).toFixed(2)} M cycles/s`,
      });
    }
  }
}

interface DelayedCandidate {
  addAfter(key: string, delayMs: number): void;
  /** Resolves when the next key is handed out (and marks it done). */
  next(): Promise<void> | undefined;
}

async function delayed(candidate: DelayedCandidate, count: number) {
  const keys = keysFor(0, count);
  globalThis.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const start = performance.now();
  // Delays 1..50 ms in a scattered order, so the heap really sorts.
  for (let i = 0; i < count; i++) candidate.addAfter(keys[i] as string, 1 + ((i * 7919) % 50));
  const scheduleMs = performance.now() - start;
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  for (let i = 0; i < count; i++) {
    const waiting = candidate.next();
    if (waiting !== undefined) await waiting;
  }
  return { scheduleMs, drainMs: performance.now() - start, heapMb };
}

async function benchDelayed(): Promise<void> {
  const count = 100_000;
  const candidates: [string, () => DelayedCandidate][] = [
    [
      'loopwright addAfter: heap + 1 timer',
      () => {
        const queue = newRateLimitingQueue();
        return {
          addAfter: (key, delayMs) => {
            queue.addAfter(key, delayMs);
          },
          next: () => {
            const item = queue.tryGet();
            if (item !== undefined) {
              if (!item.shutdown) queue.done(item.key);
              return undefined;
            }
            return queue.get().then((waited) => {
              if (!waited.shutdown) queue.done(waited.key);
            });
          },
        };
      },
    ],
    [
      'naive: setTimeout per key',
      () => {
        const queue = new NaiveQueue();
        return {
          addAfter: (key, delayMs) => {
            queue.addAfter(key, delayMs);
          },
          next: () => queue.get().then(() => undefined),
        };
      },
    ],
  ];
  for (const [implementation, make] of candidates) {
    await delayed(make(), count / 10); // warm-up
    let best: Awaited<ReturnType<typeof delayed>> | undefined;
    for (let run = 0; run < 3; run++) {
      const result = await delayed(make(), count);
      if (best === undefined || result.drainMs < best.drainMs) best = result;
    }
    if (best === undefined) continue;
    rows.push({
      scenario: `${count / 1000}k keys, addAfter 1-50 ms`,
      implementation,
      result:
        `schedule ${best.scheduleMs.toFixed(0)} ms (~${best.heapMb.toFixed(0)} MB heap), ` +
        `all handed out at ${best.drainMs.toFixed(0)} ms`,
    });
  }
}

/**
 * Retry storm: 1k keys each addAfter'ed 100 times (e.g. a flapping watch re-triggering failing keys).
 * The queue keeps one entry per key at its earliest time; per-key timers pile up.
 */
async function benchRepeatedDelays(): Promise<void> {
  const keys = keysFor(0, 1000);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const candidates: [string, () => { addAfter(key: string, delayMs: number): void; ready(): number }][] = [
    [
      'loopwright addAfter: heap + 1 timer',
      () => {
        const queue = newRateLimitingQueue();
        return {
          addAfter: (key, delayMs) => {
            queue.addAfter(key, delayMs);
          },
          ready: () => queue.len(),
        };
      },
    ],
    [
      'naive: setTimeout per key',
      () => {
        const queue = new NaiveQueue();
        return {
          addAfter: (key, delayMs) => {
            queue.addAfter(key, delayMs);
          },
          ready: () => queue.size,
        };
      },
    ],
  ];
  for (const [implementation, make] of candidates) {
    const candidate = make();
    globalThis.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const start = performance.now();
    for (let round = 0; round < 100; round++) {
      for (let i = 0; i < keys.length; i++)
        candidate.addAfter(keys[i] as string, 1 + ((i * 31 + round * 7) % 50));
    }
    const scheduleMs = performance.now() - start;
    const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    await sleep(80);
    rows.push({
      scenario: '1k keys x 100 addAfter 1-50 ms',
      implementation,
      result: `schedule ${scheduleMs.toFixed(0)} ms (~${heapMb.toFixed(1)} MB heap), ${candidate.ready()} keys ready after 80 ms`,
    });
  }
}

/**
 * The two orderings on 100k distinct keys, as after a restart: the initial list at low priority with new
 * events at normal priority in between (1 in 10), then every list key raised by an event before a worker
 * gets to it. Adds, raises, then every key handed out and done; best of 3 runs per phase.
 */
function benchOrderings(): void {
  const count = 100_000;
  const keys = keysFor(0, count);
  const priorityOf = (i: number) => (i % 10 === 0 ? NORMAL_PRIORITY : LOW_PRIORITY);
  const rate = (ops: number, ms: number) => `${(ops / ms / 1000).toFixed(2)} M/s`;
  for (const ordering of ['fifo', 'priority'] as Ordering[]) {
    const best = { addMs: Infinity, raiseMs: Infinity, getMs: Infinity };
    for (let run = 0; run < 4; run++) {
      const queue = newRateLimitingQueue({ ordering });
      let start = performance.now();
      for (let i = 0; i < count; i++) queue.add(keys[i] as string, priorityOf(i));
      const addMs = performance.now() - start;
      start = performance.now();
      for (let i = 0; i < count; i++) queue.add(keys[i] as string, NORMAL_PRIORITY);
      const raiseMs = performance.now() - start;
      start = performance.now();
      for (let item = queue.tryGet(); item !== undefined && !item.shutdown; item = queue.tryGet()) {
        queue.done(item.key);
      }
      const getMs = performance.now() - start;
      if (queue.len() !== 0) throw new Error('not drained');
      if (run === 0) continue; // warm-up
      best.addMs = Math.min(best.addMs, addMs);
      best.raiseMs = Math.min(best.raiseMs, raiseMs);
      best.getMs = Math.min(best.getMs, getMs);
    }
    rows.push({
      scenario: `${count / 1000}k keys: add (90% low), raise all, get+done`,
      implementation: `loopwright ordering: '${ordering}'`,
      result: `add ${rate(count, best.addMs)}, raise ${rate(count, best.raiseMs)}, get+done ${rate(count, best.getMs)}`,
    });
  }
}

await benchCycles();
benchOrderings();
await benchDelayed();
await benchRepeatedDelays();
console.log(`node ${process.version}, ${(await import('node:os')).cpus().length} CPUs (best of 3 runs)`);
console.table(rows);
