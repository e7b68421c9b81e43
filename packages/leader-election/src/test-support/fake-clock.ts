import type { Clock, Timer } from '../clock.ts';

interface FakeTimer {
  readonly dueAt: number;
  readonly seq: number;
  readonly callback: () => void;
}

/** Lets every pending promise continuation run (microtasks drain before the next macrotask). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A manually advanced {@link Clock}. {@link FakeClock.advance} runs due timers in order and lets
 * promise chains settle between them, so an elector talking to an in-memory lock runs exactly as it
 * would in real time, minus the waiting. The wall clock moves with the monotonic one, offset by
 * `wallOffsetMs` (change it to simulate a skewed or jumping wall clock).
 */
export class FakeClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers = new Set<FakeTimer>();
  wallOffsetMs = Date.UTC(2026, 10, 22, 5, 20, 0);

  now(): number {
    return this.#now;
  }

  wallTime(): number {
    return this.#now + this.wallOffsetMs;
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    const timer = { dueAt: this.#now + Math.max(0, delayMs), seq: this.#seq++, callback };
    this.#timers.add(timer);
    return { cancel: () => this.#timers.delete(timer) };
  }

  /** Moves time forward by `ms`, firing due timers in order with pending work settled in between. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await settle();
      let next: FakeTimer | undefined;
      for (const timer of this.#timers) {
        if (timer.dueAt > target) continue;
        if (
          next === undefined ||
          timer.dueAt < next.dueAt ||
          (timer.dueAt === next.dueAt && timer.seq < next.seq)
        ) {
          next = timer;
        }
      }
      if (next === undefined) break;
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.dueAt);
      next.callback();
    }
    this.#now = target;
    await settle();
  }
}
