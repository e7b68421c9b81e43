/**
 * Time source for backoff sleeps and timers. Injected so that tests can drive the reflector's
 * schedule deterministically with a fake clock instead of sleeping.
 */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Opaque handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = object | number;

/**
 * Wall clock backed by the global timers. Timers stay ref'd on purpose: a running informer that is
 * backing off between attempts must keep the process alive exactly like an open watch does.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/**
 * Resolves after `ms` on `clock`, or resolves early (never rejects) when `signal` aborts: callers
 * check `signal.aborted` afterwards, which keeps shutdown free of error paths.
 */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      resolve();
    };
    const handle = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
