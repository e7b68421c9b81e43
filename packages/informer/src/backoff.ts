import type { Clock } from './clock.ts';

/** Parameters of {@link Backoff}. Defaults are client-go's reflector values. */
export interface BackoffOptions {
  /** First delay. Default 800 ms. */
  initialMs?: number;
  /** Growth per consecutive failure. Default 2. */
  factor?: number;
  /** Largest un-jittered delay. Default 30 s. */
  capMs?: number;
  /** Each delay is `base * (1 + jitter * random())`, so with 1.0 up to twice the base. Default 1.0. */
  jitter?: number;
  /**
   * If no failure happened for this long, the next failure starts again at `initialMs`
   * (client-go's `backoffResetDuration`). Default 2 min.
   */
  resetAfterMs?: number;
  /** Source of randomness in [0, 1); injectable for tests. Default `Math.random`. */
  random?: () => number;
}

/**
 * Jittered exponential backoff with reset after a healthy period, shared by every failure path of
 * the reflector. Jitter spreads reconnects of many informers (and many replicas) after an API server
 * restart instead of hitting it in lockstep.
 */
export class Backoff {
  readonly #clock: Clock;
  readonly #initialMs: number;
  readonly #factor: number;
  readonly #capMs: number;
  readonly #jitter: number;
  readonly #resetAfterMs: number;
  readonly #random: () => number;
  #baseMs: number;
  #lastFailureAt: number | undefined;

  constructor(clock: Clock, options: BackoffOptions = {}) {
    this.#clock = clock;
    this.#initialMs = options.initialMs ?? 800;
    this.#factor = options.factor ?? 2;
    this.#capMs = options.capMs ?? 30_000;
    this.#jitter = options.jitter ?? 1.0;
    this.#resetAfterMs = options.resetAfterMs ?? 120_000;
    this.#random = options.random ?? Math.random;
    this.#baseMs = this.#initialMs;
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    const now = this.#clock.now();
    if (this.#lastFailureAt !== undefined && now - this.#lastFailureAt > this.#resetAfterMs) {
      this.#baseMs = this.#initialMs;
    }
    this.#lastFailureAt = now;
    const base = this.#baseMs;
    this.#baseMs = Math.min(this.#baseMs * this.#factor, this.#capMs);
    return Math.round(base * (1 + this.#jitter * this.#random()));
  }
}
