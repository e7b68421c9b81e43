/** A one-shot timer armed by {@link Clock.setTimer}. */
export interface Timer {
  /** Disarms the timer; a no-op once it fired. */
  cancel(): void;
}

/**
 * The elector's two notions of time, injectable so tests drive it deterministically.
 *
 * Expiry of someone else's lease is judged only on the monotonic {@link Clock.now} (how long WE have
 * seen the record unchanged), so wall-clock jumps and skew between nodes never decide who leads.
 * The wall clock only stamps `acquireTime`/`renewTime`, which are informational.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale; only differences matter. */
  now(): number;
  /** Milliseconds since the Unix epoch (fractions allowed), for the Lease's timestamps. */
  wallTime(): number;
  /** Runs `callback` once, `delayMs` (>= 0) milliseconds from now. */
  setTimer(callback: () => void, delayMs: number): Timer;
}

/**
 * `performance.now()`, `Date.now()` and Node timers. Timers are ref'd: a candidate waiting for the
 * lease is doing its job and must keep the process alive.
 */
export const realClock: Clock = {
  now: () => performance.now(),
  wallTime: () => Date.now(),
  setTimer(callback, delayMs) {
    const timeout = setTimeout(callback, delayMs);
    return {
      cancel() {
        clearTimeout(timeout);
      },
    };
  },
};

/** Resolves after `delayMs`, or early (never rejects) when `signal` aborts; callers check `signal.aborted`. */
export function sleep(clock: Clock, delayMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * An AbortSignal that aborts after `delayMs` on `clock` or when `parent` aborts. `AbortSignal.timeout`
 * cannot be used: it runs on real time, which fake clocks in tests do not control.
 * Call `dispose` when done so the timer does not outlive the request.
 */
export function deadlineSignal(
  clock: Clock,
  delayMs: number,
  parent: AbortSignal,
): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onParentAbort = (): void => {
    controller.abort(parent.reason);
  };
  const timer = clock.setTimer(() => {
    controller.abort(new DOMException(`deadline of ${delayMs} ms exceeded`, 'TimeoutError'));
  }, delayMs);
  if (parent.aborted) onParentAbort();
  else parent.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      timer.cancel();
      parent.removeEventListener('abort', onParentAbort);
    },
  };
}
