import type { Clock } from '@loopwright/core';

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
