/**
 * The `background` priority's scheduling: a background request (an Event, a diagnostic) is sent only
 * once no other request of its transport has been on its way for a moment, so that it takes the API
 * server's time from reconciles only when they never pause, and then late rather than never.
 */
import type { Clock, Timer } from '@loopwright/core';

/**
 * How long a transport must have had no other request on its way before a `background` one is sent. The
 * requests of a burst follow each other more closely than this, so the burst's diagnostics wait for its
 * end instead of taking the server's time from it. Short enough that steady traffic with ordinary gaps
 * (a request every 50 ms, say) does not starve them; a lone reconcile's Event goes this much later.
 */
export const BACKGROUND_QUIET_MS = 20;

/**
 * How long a `background` request waits for {@link BACKGROUND_QUIET_MS} of quiet before it is sent
 * anyway: a transport that is never quiet (a controller busy for minutes) must still write its
 * diagnostics, late rather than never. The Event recorder sends one write at a time, so under constant
 * load its Events go at one per this period, a load no reconcile notices.
 */
export const BACKGROUND_MAX_WAIT_MS = 2_000;

/**
 * Counts the transport's requests on their way (above `background` priority, from their start to their
 * response headers) and holds the background requests waiting for quiet.
 */
export class BackgroundScheduler {
  readonly #clock: Clock;
  /** Requests above `background` priority between their start and their response headers. */
  #busy = 0;
  /** When {@link #busy} last fell to 0, on the clock's monotonic scale. */
  #quietSince = Number.NEGATIVE_INFINITY;
  /** Wakes the {@link #idleWaiters} once the transport has been quiet for {@link BACKGROUND_QUIET_MS}. */
  #quietTimer: Timer | undefined;
  /** `background` requests waiting for the transport to be quiet. */
  readonly #idleWaiters = new Set<() => void>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Resolves once no other request has been on its way for {@link BACKGROUND_QUIET_MS}, or after
   * {@link BACKGROUND_MAX_WAIT_MS} of waiting for that.
   */
  whenQuiet(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#quiet()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const stopWaiting = (): void => {
        this.#idleWaiters.delete(wake);
        signal.removeEventListener('abort', onAbort);
        longest.cancel();
      };
      const onAbort = (): void => {
        stopWaiting();
        reject(signal.reason as Error);
      };
      const wake = (): void => {
        stopWaiting();
        resolve();
      };
      const longest = this.#clock.setTimer(wake, BACKGROUND_MAX_WAIT_MS, { unref: true });
      signal.addEventListener('abort', onAbort);
      this.#idleWaiters.add(wake);
      this.#armQuietTimer();
    });
  }

  #quiet(): boolean {
    return this.#busy === 0 && this.#clock.now() - this.#quietSince >= BACKGROUND_QUIET_MS;
  }

  /** A request above `background` priority starts. */
  busied(): void {
    this.#busy += 1;
    this.#quietTimer?.cancel();
    this.#quietTimer = undefined;
  }

  /** A request of {@link busied} has its response headers, or failed. */
  settled(): void {
    this.#busy -= 1;
    // Set by every settled request, so it is the last one's once none is left on its way.
    this.#quietSince = this.#clock.now();
    this.#armQuietTimer();
  }

  #armQuietTimer(): void {
    if (this.#quietTimer !== undefined || this.#busy > 0 || this.#idleWaiters.size === 0) return;
    const delayMs = this.#quietSince + BACKGROUND_QUIET_MS - this.#clock.now();
    this.#quietTimer = this.#clock.setTimer(
      () => {
        this.#quietTimer = undefined;
        // Quiet: any request started since the timer was armed cancelled it. Each waiter leaves the set as it wakes.
        for (const wake of [...this.#idleWaiters]) wake();
      },
      delayMs,
      { unref: true },
    );
  }
}
