import type { Clock, Timer, TimerOptions } from './clock.ts';

interface FakeTimer {
  readonly dueAt: number;
  readonly seq: number;
  readonly callback: () => void;
  readonly unref: boolean;
}

/**
 * A manually advanced {@link Clock} for tests. Time only moves in {@link FakeClock.advance}, which runs every
 * timer that falls due on the way, in due order (ties in arming order), with `now()` equal to the timer's
 * due time while its callback runs. Timers armed by those callbacks also run if they fall due within
 * the advanced span.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<FakeTimer>();

  /** @param startMs the initial value of `now()`. */
  constructor(startMs = 0) {
    this.#now = startMs;
  }

  /** The current fake time in milliseconds. */
  now(): number {
    return this.#now;
  }

  /** Arms a timer due at `now() + max(0, delayMs)`. */
  setTimer(callback: () => void, delayMs: number, options?: TimerOptions): Timer {
    const timer: FakeTimer = {
      dueAt: this.#now + Math.max(0, delayMs),
      seq: this.#seq++,
      callback,
      unref: options?.unref === true,
    };
    this.#timers.add(timer);
    return { cancel: () => this.#timers.delete(timer) };
  }

  /**
   * Armed timers (not fired, not cancelled).
   * @param options.includeUnref count unref'd timers too (default true).
   */
  armedTimers(options: { includeUnref?: boolean } = {}): number {
    if (options.includeUnref !== false) return this.#timers.size;
    let count = 0;
    for (const timer of this.#timers) if (!timer.unref) count++;
    return count;
  }

  /** Moves time forward by `ms` (>= 0), running due timers in order. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.advance: ms must be >= 0, got ${ms}`);
    const target = this.#now + ms;
    for (;;) {
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
  }
}
