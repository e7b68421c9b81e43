/**
 * client-go's `retry.RetryOnConflict`: run a read-modify-write again when the API server answers 409
 * Conflict (the object changed since it was read), waiting a short jittered delay between attempts so
 * that writers racing for the same object spread out.
 */
import { Backoff, realClock, sleep, type BackoffOptions, type Clock } from '@loopwright/core';
import { isConflict } from '@loopwright/client';

/**
 * client-go's `retry.DefaultRetry`: 5 attempts, 10 ms apart (+ up to 10% jitter). Made for writes that
 * conflict with a few other writers at once, as a controller's writes to its own objects do.
 */
export const defaultRetry: BackoffOptions = { steps: 5, durationMs: 10, factor: 1.0, jitter: 0.1 };

export interface RetryOnConflictOptions {
  /**
   * The attempts and the waits between them, as client-go's `wait.Backoff`: `steps` attempts in all
   * (an integer >= 1), the waits from {@link Backoff}. Default {@link defaultRetry}.
   */
  readonly backoff?: BackoffOptions;
  /** The clock the waits run on. Default the process clock; tests pass a `FakeClock`. */
  readonly clock?: Clock;
  /** Stops retrying: an abort during a wait rejects with the last conflict instead of trying again. */
  readonly signal?: AbortSignal;
}

/**
 * Calls `attempt` until it resolves, it rejects with anything but a Conflict, or `backoff.steps`
 * attempts have all been conflicts; then rejects with the last conflict. `attempt` must read the
 * object afresh each time: retrying a write computed from the same stale copy only conflicts again.
 *
 * @throws RangeError when `backoff.steps` is not an integer >= 1 (client-go's loop would not run at
 *   all and return no error, which hides the write that never happened).
 */
export async function retryOnConflict<T>(
  attempt: () => Promise<T>,
  options: RetryOnConflictOptions = {},
): Promise<T> {
  const backoffOptions = options.backoff ?? defaultRetry;
  const { steps } = backoffOptions;
  if (!(Number.isInteger(steps) && steps >= 1)) {
    throw new RangeError(`retryOnConflict: backoff.steps must be an integer >= 1, got ${steps}`);
  }
  const clock = options.clock ?? realClock;
  const backoff = new Backoff(backoffOptions);
  for (let attemptNumber = 1; ; attemptNumber++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConflict(error) || attemptNumber >= steps) throw error;
      await sleep(clock, backoff.step(), options.signal);
      if (options.signal?.aborted === true) throw error;
    }
  }
}
