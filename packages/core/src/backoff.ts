import type { Clock } from './clock.ts';

/**
 * client-go's `wait.Backoff` fields, in milliseconds. As there, `steps` must be set for `factor` to
 * do anything: with `steps: 0` every delay is `durationMs`.
 */
export interface BackoffOptions {
  /** The first delay (`Duration`), >= 0. */
  readonly durationMs: number;
  /** Each step multiplies the delay by this (`Factor`), >= 0; 0 keeps it constant. */
  readonly factor: number;
  /**
   * How many steps may still change the delay (`Steps`): an integer, or `Infinity` for "until the
   * cap". Once used up (or once the cap is reached) the delay stays where it is.
   */
  readonly steps: number;
  /**
   * Each delay is `delay + random() * jitter * delay` (`Jitter`), so 1.0 waits up to twice the delay;
   * <= 0 (the default) draws no randomness. Jitter never feeds back into the next delay.
   */
  readonly jitter?: number;
  /** The delay never grows beyond this (`Cap`), >= 0; 0 or absent: no cap. */
  readonly capMs?: number;
  /** Randomness in [0, 1) for the jitter. Default `Math.random`; tests inject their own. */
  readonly random?: () => number;
}

/**
 * client-go's `wait.Jitter`: a delay between `durationMs` and `durationMs * (1 + maxFactor)`, so that
 * many clients retrying the same thing spread out instead of arriving in lockstep. `maxFactor <= 0`
 * means 1.0, as in client-go.
 */
export function jitter(durationMs: number, maxFactor: number, random: () => number = Math.random): number {
  const factor = maxFactor > 0 ? maxFactor : 1;
  return durationMs + random() * factor * durationMs;
}

/**
 * client-go's `wait.Backoff` with its exact stepping rules (`Backoff.Step`). Each {@link step} returns
 * the current delay (jittered) and moves to the next one:
 *
 * - while `steps >= 1`, one step is used and the next delay is `delay * factor`; if that exceeds
 *   `capMs`, the next delay is `capMs` and no steps remain;
 * - with no steps left the delay no longer changes: a backoff that ran out of steps keeps returning its
 *   last delay (it does not stop; stopping after N attempts is the caller's loop, as in client-go's
 *   `ExponentialBackoff`).
 *
 * The first delay is `durationMs` even when it exceeds the cap. Durations are milliseconds as floating
 * point numbers: client-go's arithmetic, without its truncation to whole nanoseconds.
 */
export class Backoff {
  readonly #factor: number;
  readonly #jitter: number;
  readonly #capMs: number;
  readonly #random: () => number;
  #durationMs: number;
  #steps: number;

  /** @throws RangeError for a negative or non-finite duration or factor, a fractional or NaN steps, a negative cap. */
  constructor(options: BackoffOptions) {
    const { durationMs, factor, steps, jitter: jitterFactor = 0, capMs = 0 } = options;
    if (!(durationMs >= 0 && durationMs < Infinity)) {
      throw new RangeError(`Backoff: durationMs must be finite and >= 0, got ${durationMs}`);
    }
    if (!(factor >= 0 && factor < Infinity)) {
      throw new RangeError(`Backoff: factor must be finite and >= 0, got ${factor}`);
    }
    if (!(Number.isInteger(steps) || steps === Infinity)) {
      throw new RangeError(`Backoff: steps must be an integer or Infinity, got ${steps}`);
    }
    if (!Number.isFinite(jitterFactor)) {
      throw new RangeError(`Backoff: jitter must be finite, got ${jitterFactor}`);
    }
    if (!(capMs >= 0)) throw new RangeError(`Backoff: capMs must be >= 0, got ${capMs}`);
    this.#durationMs = durationMs;
    this.#factor = factor;
    this.#steps = steps;
    this.#jitter = jitterFactor;
    this.#capMs = capMs;
    this.#random = options.random ?? Math.random;
  }

  /** Returns how long to wait now, and advances to the next delay. */
  step(): number {
    const current = this.#durationMs;
    if (this.#steps >= 1) {
      this.#steps--;
      if (this.#factor !== 0) {
        const next = current * this.#factor;
        if (this.#capMs > 0 && next > this.#capMs) {
          this.#durationMs = this.#capMs;
          this.#steps = 0;
        } else {
          this.#durationMs = next;
        }
      }
    }
    return this.#jitter > 0 ? jitter(current, this.#jitter, this.#random) : current;
  }
}

export interface BackoffManagerOptions extends BackoffOptions {
  /** After this long (on `clock.now()`) without a step, the next step starts over from the first delay. */
  readonly resetAfterMs: number;
  readonly clock: Clock;
}

/**
 * A {@link Backoff} that starts over after a quiet period: client-go's
 * `NewExponentialBackoffManager`, the reflector's backoff between failed lists and watches. A step
 * more than `resetAfterMs` after the previous one (or after construction) restarts from the initial
 * `durationMs` and `steps`, so a failure after a healthy stretch is retried quickly, while failures in
 * a row keep growing to the cap.
 *
 * This is the original rule: quiet is measured from the last step. apimachinery's newer
 * `Backoff.DelayWithReset` measures from the last reset instead, which starts over in the middle of a
 * long outage; a reflector should not hit a failing API server at the initial rate every few minutes.
 */
export class BackoffManager {
  readonly #options: BackoffManagerOptions;
  readonly #clock: Clock;
  #backoff: Backoff;
  #lastStepAt: number;

  /** @throws RangeError for a negative `resetAfterMs`, and as {@link Backoff} does. */
  constructor(options: BackoffManagerOptions) {
    if (!(options.resetAfterMs >= 0)) {
      throw new RangeError(`BackoffManager: resetAfterMs must be >= 0, got ${options.resetAfterMs}`);
    }
    this.#options = options;
    this.#clock = options.clock;
    this.#backoff = new Backoff(options);
    this.#lastStepAt = this.#clock.now();
  }

  /** Returns how long to wait before the next attempt, starting over after a quiet period. */
  step(): number {
    const now = this.#clock.now();
    if (now - this.#lastStepAt > this.#options.resetAfterMs) this.#backoff = new Backoff(this.#options);
    this.#lastStepAt = now;
    return this.#backoff.step();
  }
}
