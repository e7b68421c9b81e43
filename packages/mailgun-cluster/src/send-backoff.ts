/**
 * How long an object waits before its next send after a failure (401, 429, 5xx, network, timeout).
 * The workqueue's backoff cannot hold this alone: the failure's own status write is a watch event that
 * reconciles the object again at once, and that reconcile would claim and send again straight away.
 * In memory, like the workqueue's backoff: after a restart (or on another replica without leader
 * election) one request may come early, never a second mail (the claim still decides who sends).
 */

import { Backoff } from '@loopwright/core';

/** The first wait after a failure; it doubles with every further one, up to {@link MAX_BACKOFF_MS}. */
export const BASE_BACKOFF_MS = 1000;
export const MAX_BACKOFF_MS = 5 * 60_000;

export class SendBackoff {
  readonly #entries = new Map<string, { uid: string; backoff: Backoff; notBefore: number }>();

  /** Milliseconds until the object `key` with `uid` may send again; 0: now. */
  remainingMs(key: string, uid: string, now: Date): number {
    const entry = this.#entries.get(key);
    if (entry?.uid !== uid) return 0;
    return Math.max(0, entry.notBefore - now.getTime());
  }

  /**
   * Records a failed send; returns the wait: `fixedMs` when given (401), else exponential. A fixed wait
   * counts as a failure too: the next exponential wait is as long as if it had been one.
   */
  failed(key: string, uid: string, now: Date, fixedMs?: number): number {
    const previous = this.#entries.get(key);
    const backoff =
      previous?.uid === uid
        ? previous.backoff
        : new Backoff({ durationMs: BASE_BACKOFF_MS, factor: 2, steps: Infinity, capMs: MAX_BACKOFF_MS });
    const exponentialMs = backoff.step();
    const waitMs = fixedMs ?? exponentialMs;
    this.#entries.set(key, { uid, backoff, notBefore: now.getTime() + waitMs });
    return waitMs;
  }

  /** The object was sent, rejected for its spec (a spec change sends at once) or deleted. */
  forget(key: string): void {
    this.#entries.delete(key);
  }
}
