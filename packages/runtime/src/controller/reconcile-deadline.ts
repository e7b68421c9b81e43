import { realClock, type Clock } from '@loopwright/core';

/** The signal one reconcile gets, and what became of its timeout. */
export interface ReconcileDeadline {
  /**
   * The signal it was given (the Manager aborts it when the work must stop), also aborted when the
   * timeout passes.
   */
  readonly signal: AbortSignal;
  /** Whether the timeout passed (and aborted `signal`). */
  timedOut(): boolean;
  /** The reconcile returned: its timeout can no longer pass. */
  clear(): void;
}

/**
 * `signal`, aborted as well `timeoutMs` after the call, with a `TimeoutError` `DOMException` as its
 * reason (what `AbortSignal.timeout` gives, so code that tells a timeout from a shutdown by the reason's
 * name keeps working); `onTimeout` runs first, once. `timeoutMs` 0 (or less) is no timeout at all: no
 * timer, the controller's own signal.
 *
 * Aborting is all a timeout can do: JavaScript cannot stop a function that ignores its signal. The
 * caller keeps the key processing until the reconcile returns, so a timed-out reconcile never runs
 * beside a second one of the same object.
 */
export function reconcileDeadline(
  signal: AbortSignal,
  timeoutMs: number,
  onTimeout: () => void,
  clock: Clock = realClock,
): ReconcileDeadline {
  if (!(timeoutMs > 0)) return { signal, timedOut: () => false, clear: () => undefined };
  const timeout = new AbortController();
  const timer = clock.setTimer(() => {
    onTimeout();
    timeout.abort(new DOMException(`reconcile timed out after ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  return {
    signal: AbortSignal.any([signal, timeout.signal]),
    timedOut: () => timeout.signal.aborted,
    clear: () => {
      timer.cancel();
    },
  };
}
