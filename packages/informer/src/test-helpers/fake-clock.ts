import type { Clock, TimerHandle } from '../clock.ts';

interface Timer {
  id: number;
  at: number;
  callback: () => void;
}

/** Manually advanced clock for deterministic timing tests. */
export class FakeClock implements Clock {
  #now = 0;
  #nextId = 1;
  #timers: Timer[] = [];

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), callback };
    this.#timers.push(timer);
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    const id = (handle as { id: number }).id;
    this.#timers = this.#timers.filter((timer) => timer.id !== id);
  }

  /** Number of pending timers. */
  get pending(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and letting promise continuations run
   * after each one (so a sleep that resolves can schedule the next request before time moves on).
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await flush();
      const due = this.#timers
        .filter((timer) => timer.at <= target)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((timer) => timer !== due);
      this.#now = due.at;
      due.callback();
    }
    this.#now = target;
    await flush();
  }
}

/** Lets pending promise continuations and I/O callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
