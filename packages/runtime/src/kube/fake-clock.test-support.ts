import type { Clock } from './clock.ts';

/**
 * A manual clock for tests: time moves only through {@link FakeClock.advance}, which runs due timers
 * in order of their due time and lets promise continuations settle between them.
 */
export class FakeClock implements Clock {
  #now: number;
  #timers: { due: number; seq: number; callback: () => void }[] = [];
  #seq = 0;

  constructor(startMs = Date.UTC(2025, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, delayMs: number): { cancel(): void } {
    const timer = { due: this.#now + Math.max(0, delayMs), seq: this.#seq++, callback };
    this.#timers.push(timer);
    return {
      cancel: () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
      },
    };
  }

  /** Number of armed timers. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, each at its own due time. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      this.#timers.sort((a, b) => a.due - b.due || a.seq - b.seq);
      const next = this.#timers[0];
      if (!next || next.due > target) break;
      this.#timers.shift();
      this.#now = next.due;
      next.callback();
      await settle();
    }
    this.#now = target;
    await settle();
  }
}

/** Lets pending promise chains run (several macrotask turns cover nested awaits). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
