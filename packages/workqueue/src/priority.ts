/**
 * controller-runtime's priorities (`handler.LowPriority`, the default 0): events of the initial list and of
 * resyncs enter at LOW_PRIORITY, so that after a restart a new or changed object is not queued behind the
 * whole backlog.
 */
export const LOW_PRIORITY = -100;
/** The priority of an add that names none. */
export const NORMAL_PRIORITY = 0;

/** Which waiting key a queue hands out next; see `RateLimitingQueueOptions.ordering`. */
export type Ordering = 'fifo' | 'priority';

/**
 * Priorities are integers, as in controller-runtime: NaN would break the ordering, and every value is
 * a metric label.
 * @throws RangeError unless `priority` is a safe integer.
 */
export function checkPriority(priority: number, key: string): void {
  if (!Number.isSafeInteger(priority)) {
    throw new RangeError(`${JSON.stringify(key)}: priority ${String(priority)} is not a safe integer`);
  }
}
