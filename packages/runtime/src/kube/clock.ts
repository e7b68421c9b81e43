/**
 * The time source of the client-side rate limiter and the event recorder, injectable so tests drive
 * time deterministically (see `fake-clock.test-support.ts`).
 */
export interface Clock {
  /** Wall-clock milliseconds since the epoch (`Date.now()`): event timestamps and rate intervals. */
  now(): number;
  /**
   * Runs `callback` once after `delayMs`. Real timers are unref'd: a pending limiter wait or a deferred
   * event-series patch must not keep a process alive that has nothing else to do (callers that need the
   * work done, like `EventRecorder.close()`, flush explicitly).
   */
  setTimer(callback: () => void, delayMs: number): { cancel(): void };
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(callback, delayMs) {
    const timeout = setTimeout(callback, Math.max(0, Math.min(delayMs, 2 ** 31 - 1)));
    timeout.unref();
    return {
      cancel() {
        clearTimeout(timeout);
      },
    };
  },
};

/** Resolves after `delayMs` on `clock`; rejects with `signal.reason` when `signal` aborts first. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(signal?.reason as Error);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
