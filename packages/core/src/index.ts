/**
 * @loopwright/core: the primitives the other packages share, so there is one of each.
 * It depends on nothing of ours; everything else may depend on it.
 */
export { realClock, sleep } from './clock.ts';
export type { Clock, Timer, TimerOptions } from './clock.ts';
export { Backoff, BackoffManager, jitter } from './backoff.ts';
export type { BackoffManagerOptions, BackoffOptions } from './backoff.ts';
export { deadlineSignal } from './deadline-signal.ts';
export type { DeadlineSignal } from './deadline-signal.ts';
