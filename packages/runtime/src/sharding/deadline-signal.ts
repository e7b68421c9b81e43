/**
 * An AbortSignal that aborts `delayMs` from now on `clock`, or when `parent` aborts: bounds each request
 * of a tick by the renew deadline, so a hung request cannot keep a member that cannot write alive.
 * `AbortSignal.timeout` runs on real time, which a FakeClock does not drive. (Leader election has the
 * same helper, internal to its package.)
 */
import type { Clock } from '@loopwright/core';

export interface DeadlineSignal {
  readonly signal: AbortSignal;
  /** Disarms the timer and lets go of `parent`. */
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
