/** Options for {@link Clock.setTimer}. */
export interface TimerOptions {
  /**
   * `true`: the timer alone must not keep the process alive (Node's `timeout.unref()`).
   * The queue's delay timer is ref'd (pending delayed keys are work); the metrics refresh timer is unref'd.
   */
  readonly unref?: boolean;
}

/** A one-shot timer armed by {@link Clock.setTimer}. */
export interface Timer {
  /** Disarms the timer; the callback will not run. Calling it after the timer fired is a no-op. */
  cancel(): void;
}

/**
 * The time source of a queue and of {@link bucketRateLimiter}. Inject {@link FakeClock} in tests to drive
 * delays, rate limits and metrics deterministically.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale. Only differences matter; the origin is arbitrary. */
  now(): number;
  /** Runs `callback` once, `delayMs` (>= 0) milliseconds from now. */
  setTimer(callback: () => void, delayMs: number, options?: TimerOptions): Timer;
}

/**
 * The largest delay Node's `setTimeout` honours; longer ones fire after 1 ms with a warning. Longer delays
 * are armed in steps of this size (the queue re-arms when a timer fires before anything is due).
 */
const maxTimerDelayMs = 2 ** 31 - 1;

/**
 * The process clock: `performance.now()` (monotonic, so wall-clock jumps neither fire nor stall delayed
 * keys) and Node timers.
 */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimer(callback, delayMs, options) {
    const timeout = setTimeout(callback, Math.min(delayMs, maxTimerDelayMs));
    if (options?.unref === true) timeout.unref();
    return {
      cancel() {
        clearTimeout(timeout);
      },
    };
  },
};
