/**
 * A client-side budget for Hetzner Cloud API requests, driven by the `RateLimit-*` headers of the last
 * response (`HcloudClient.rateLimit`). The API's bucket (3600 requests, refilled 1/s) is shared by
 * everything that uses the project's token (this controller, the CSI driver, Terraform...), so the
 * controller slows itself down long before a 429:
 *
 * - above `refreshFloor` of the bucket (default 50 %) everything runs as scheduled, bursts included;
 * - below it, non-urgent work (the periodic address refresh) waits until the bucket has refilled above
 *   the floor again, and urgent work (lifecycle checks of NotReady Nodes, initialisation) is paced to
 *   `urgentShare` (default 50 %) of the refill rate, leaving the rest to other API users;
 * - below `urgentFloor` (default 10 %) urgent work waits too, until the bucket is back above it.
 *
 * The refill rate is read from the headers: the bucket refills linearly from `remaining` to `limit` by
 * `RateLimit-Reset`. With a full bucket the headers do not tell, and the documented 1 request per
 * second per 3600 (`limit` per hour) is assumed.
 */
import type { RateLimitState } from '@loopwright/hcloud';

export type Priority = 'urgent' | 'refresh';

export interface RequestBudgetOptions {
  /** The last `RateLimit-*` state (e.g. `() => client.rateLimit`); `undefined` before the first response. */
  rateLimit: () => RateLimitState | undefined;
  /** Unix ms; the same clock as the client's `observedAt`. Default `Date.now`. */
  now?: () => number;
  /** Share of the bucket non-urgent work leaves untouched. Default 0.5. */
  refreshFloor?: number;
  /** Share of the bucket even urgent work leaves untouched. Default 0.1. */
  urgentFloor?: number;
  /** Below `refreshFloor`, the share of the refill rate urgent work may use. Default 0.5. */
  urgentShare?: number;
}

const HOUR_MS = 3_600_000;

export class RequestBudget {
  readonly #rateLimit: () => RateLimitState | undefined;
  readonly #now: () => number;
  readonly #refreshFloor: number;
  readonly #urgentFloor: number;
  readonly #urgentShare: number;
  #lastUrgent: { at: number; cost: number } | undefined;

  constructor(options: RequestBudgetOptions) {
    this.#rateLimit = options.rateLimit;
    this.#now = options.now ?? Date.now;
    this.#refreshFloor = options.refreshFloor ?? 0.5;
    this.#urgentFloor = options.urgentFloor ?? 0.1;
    this.#urgentShare = options.urgentShare ?? 0.5;
    if (!(this.#urgentFloor >= 0 && this.#urgentFloor <= this.#refreshFloor && this.#refreshFloor < 1))
      throw new RangeError('RequestBudget: need 0 <= urgentFloor <= refreshFloor < 1');
    if (!(this.#urgentShare > 0 && this.#urgentShare <= 1))
      throw new RangeError('RequestBudget: urgentShare must be in (0, 1]');
  }

  /** Milliseconds per refilled request, as the last headers imply. */
  msPerToken(state: RateLimitState): number {
    const missing = state.limit - state.remaining;
    const untilFull = state.resetAt - state.observedAt;
    if (missing > 0 && untilFull > 0) return untilFull / missing;
    return HOUR_MS / Math.max(1, state.limit);
  }

  /** Requests available now: the last reported `remaining` plus what has refilled since. */
  projectedRemaining(state: RateLimitState, now = this.#now()): number {
    const refilled = Math.max(0, now - state.observedAt) / this.msPerToken(state);
    return Math.min(state.limit, state.remaining + refilled);
  }

  /**
   * How long work of `priority` costing `cost` requests should wait; 0 = go now. `unpaced` skips the
   * pacing of urgent work (not the floors): for the few follow-up requests that complete work already
   * paced, e.g. confirming by id what a sweep just missed.
   */
  delayMs(priority: Priority, cost: number, options: { unpaced?: boolean } = {}): number {
    const state = this.#rateLimit();
    if (state === undefined) return 0;
    const now = this.#now();
    const msPerToken = this.msPerToken(state);
    const available = this.projectedRemaining(state, now);
    const aboveRefreshFloor = available - cost - this.#refreshFloor * state.limit;
    if (aboveRefreshFloor >= 0) return 0;
    if (priority === 'refresh') return Math.ceil(-aboveRefreshFloor * msPerToken);
    const aboveUrgentFloor = available - cost - this.#urgentFloor * state.limit;
    if (aboveUrgentFloor < 0) return Math.ceil(-aboveUrgentFloor * msPerToken);
    if (this.#lastUrgent === undefined || options.unpaced === true) return 0;
    const pacedAt = this.#lastUrgent.at + (this.#lastUrgent.cost * msPerToken) / this.#urgentShare;
    return Math.max(0, Math.ceil(pacedAt - now));
  }

  /** Records that work was let through (the pacing of urgent work counts from here). */
  spend(priority: Priority, cost: number): void {
    if (priority === 'urgent') this.#lastUrgent = { at: this.#now(), cost };
  }
}
