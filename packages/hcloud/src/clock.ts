import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The client's time source. Wall-clock based because `RateLimit-Reset` is a Unix time. Inject a stepping
 * clock in tests (`SteppingClock` from @loopwright/testing) so backoff and 429 waits take no real time.
 * The per-request timeout always uses real timers: it bounds real network I/O.
 */
export interface HcloudClock {
  /** Unix time in milliseconds. */
  now(): number;
  /** Resolves after `ms`; rejects (with anything) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: HcloudClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, signal ? { signal } : undefined),
};
