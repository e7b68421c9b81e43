import type { Clock, Timer, TimerOptions } from './clock.ts';

interface FakeTimer {
  readonly dueAt: number;
  /** Arming order: timers due at the same time run in the order they were armed. */
  readonly seq: number;
  readonly callback: () => void;
  readonly unref: boolean;
}

export interface FakeClockOptions {
  /** `now()` at the start. Default 0. */
  readonly nowMs?: number;
  /** `wallTime()` at the start; it then moves with `now()`. Default 2026-01-01T00:00:00Z. */
  readonly wallTimeMs?: number;
  /**
   * `true`: nothing waits. On the event loop turn after a timer is armed (`setImmediate`), the clock
   * steps to the timer's due time, running it and any timer due before it. Waits (a backoff, a 429's
   * wait) then take no real time while `now()` and `wallTime()` move by exactly as much. Meant for
   * code whose timers are waits: a timer that re-arms itself from its callback never lets time rest.
   */
  readonly autoAdvance?: boolean;
}

/**
 * A {@link Clock} whose time only moves when the test says so, like client-go's
 * `k8s.io/utils/clock/testing.FakeClock`. Timers run when time reaches them, in due order (ties in
 * arming order), with `now()` equal to their due time while they run; timers they arm run too if
 * they fall due within the same move. {@link step} is synchronous; {@link advance} also lets promise
 * chains settle before each timer, for code that awaits between timers.
 */
export class FakeClock implements Clock {
  /**
   * Every `delayMs` given to {@link setTimer}, in arming order: what the code under test chose to
   * wait. Tests may clear it.
   */
  readonly armedDelays: number[] = [];
  readonly #timers = new Set<FakeTimer>();
  readonly #wallOffsetMs: number;
  readonly #autoAdvance: boolean;
  #now: number;
  #seq = 0;

  constructor(options: FakeClockOptions = {}) {
    this.#now = options.nowMs ?? 0;
    this.#wallOffsetMs = (options.wallTimeMs ?? Date.UTC(2026, 0, 1)) - this.#now;
    this.#autoAdvance = options.autoAdvance === true;
  }

  now(): number {
    return this.#now;
  }

  wallTime(): number {
    return this.#now + this.#wallOffsetMs;
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
    this.armedDelays.push(delayMs);
    if (this.#autoAdvance) {
      setImmediate(() => {
        if (this.#timers.has(timer)) this.step(Math.max(0, timer.dueAt - this.#now));
      });
    }
    return { cancel: () => this.#timers.delete(timer) };
  }

  /**
   * Timers armed and neither run nor cancelled.
   * @param options.includeUnref count unref'd timers too (default `true`); `false` counts only the
   *   timers that would keep a real process alive.
   */
  pendingTimers(options: { includeUnref?: boolean } = {}): number {
    if (options.includeUnref !== false) return this.#timers.size;
    let count = 0;
    for (const timer of this.#timers) if (!timer.unref) count++;
    return count;
  }

  /**
   * Moves time forward by `ms`, running every timer that falls due on the way, synchronously.
   * @throws RangeError unless `ms` is finite and >= 0.
   */
  step(ms: number): void {
    const target = this.#target('step', ms);
    for (let next = this.#nextDue(target); next !== undefined; next = this.#nextDue(target)) {
      this.#run(next);
    }
    this.#now = Math.max(this.#now, target);
  }

  /**
   * Moves time forward by `ms` like {@link step}, but lets pending promise continuations and I/O
   * callbacks run ({@link settle}) before each due timer and at the end: code that awaits after a
   * timer (a sleep that resolves, then the next request) arms its next timer before time moves on.
   * @throws RangeError unless `ms` is finite and >= 0.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#target('advance', ms);
    for (;;) {
      await settle();
      const next = this.#nextDue(target);
      if (next === undefined) break;
      this.#run(next);
    }
    this.#now = Math.max(this.#now, target);
    await settle();
  }

  #target(method: string, ms: number): number {
    if (!(ms >= 0 && ms < Infinity)) {
      throw new RangeError(`FakeClock.${method}: ms must be finite and >= 0, got ${ms}`);
    }
    return this.#now + ms;
  }

  #nextDue(target: number): FakeTimer | undefined {
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
    return next;
  }

  #run(timer: FakeTimer): void {
    this.#timers.delete(timer);
    this.#now = Math.max(this.#now, timer.dueAt);
    timer.callback();
  }
}

/**
 * Lets pending promise continuations and I/O callbacks run: several turns of the event loop, so that
 * chains of awaits (a request, its response, the next request) get through.
 */
export async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}
