/** Options for {@link Clock.setTimer}. */
export interface TimerOptions {
  /**
   * `true`: the timer alone does not keep the process alive (Node's `timeout.unref()`), for work that
   * only matters while something else runs (a metrics refresh, a rate limiter's wait). Default `false`:
   * a pending delayed key or a backoff between reconnects is work, and keeps the process up.
   */
  readonly unref?: boolean;
}

/** A one-shot timer armed by {@link Clock.setTimer}. */
export interface Timer {
  /** Disarms the timer: the callback will not run. A no-op once it ran or was cancelled. */
  cancel(): void;
}

/**
 * The time source of every Loopwright package, injectable so that tests drive time with
 * {@link FakeClock} instead of waiting (client-go's `k8s.io/utils/clock.Clock`).
 *
 * Two scales, because they answer different questions: {@link now} measures durations (delays,
 * deadlines, rates, "unchanged for 15 s") and never jumps; {@link wallTime} stamps what other
 * processes read (a Lease's `renewTime`, an Event's `eventTime`, a `RateLimit-Reset` compared with
 * it), and may jump when NTP corrects the system clock.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale; only differences matter, the origin is arbitrary. */
  now(): number;
  /** Milliseconds since the Unix epoch (fractions allowed). Never measure a duration with it. */
  wallTime(): number;
  /** Runs `callback` once, `delayMs` (>= 0; less counts as 0) milliseconds from now on {@link now}'s scale. */
  setTimer(callback: () => void, delayMs: number, options?: TimerOptions): Timer;
}

/**
 * The largest delay Node's `setTimeout` honours (about 24.8 days); a longer one would fire after 1 ms
 * with a warning. Longer delays are armed in steps of this size.
 */
const maxTimeoutMs = 2 ** 31 - 1;

/**
 * The process clock: `performance.now()` (monotonic, so wall-clock jumps neither fire nor stall
 * timers), `Date.now()` and Node timers. Any delay is honoured, however long: beyond Node's limit the
 * timer is re-armed for the rest until it is due.
 */
export const realClock: Clock = {
  now: () => performance.now(),
  wallTime: () => Date.now(),
  setTimer(callback, delayMs, options) {
    let remainingMs = Math.max(0, delayMs);
    let timeout: NodeJS.Timeout;
    const arm = (): void => {
      const stepMs = Math.min(remainingMs, maxTimeoutMs);
      remainingMs -= stepMs;
      timeout = setTimeout(remainingMs > 0 ? arm : callback, stepMs);
      if (options?.unref === true) timeout.unref();
    };
    arm();
    return {
      cancel() {
        clearTimeout(timeout);
      },
    };
  },
};

/**
 * Resolves after `delayMs` on `clock`, or as soon as `signal` aborts. It never rejects: callers check
 * `signal.aborted` afterwards, so stopping is a normal return, not an error path.
 */
export function sleep(
  clock: Clock,
  delayMs: number,
  signal?: AbortSignal,
  options?: TimerOptions,
): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      delayMs,
      options,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
