/**
 * An AbortSignal that aborts `delayMs` from now on `clock` (with a `TimeoutError`), or when `parent`
 * aborts (with its reason): bounds one request by a deadline, such as a lease's renew deadline, so that a
 * hung request cannot outlive it. Not `AbortSignal.timeout`: that runs on real time, which a FakeClock
 * does not drive.
 */
import type { Clock } from './clock.ts';

export interface DeadlineSignal {
  readonly signal: AbortSignal;
  /** Disarms the timer and lets go of `parent`: call it when the request is done. */
  dispose(): void;
}

export function deadlineSignal(clock: Clock, delayMs: number, parent: AbortSignal): DeadlineSignal {
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
