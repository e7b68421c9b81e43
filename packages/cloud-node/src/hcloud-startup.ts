/**
 * The start-up calls to the Hetzner Cloud API (token check, HCLOUD_NETWORK lookup), retried through
 * transient failures instead of exiting: in a pod an exit is a restart, and a crash loop during an API
 * outage only adds kubelet's growing restart delay to the outage. An answer that rejects a value (the
 * token, the endpoint, a network the API does not know) ends start-up with a `ConfigError` naming the
 * option as the user set it, a bad value like any other: exit 2 (see `startup-decision.ts` for which
 * answers are which).
 */
import { Backoff, realClock, sleep, type BackoffOptions } from '@loopwright/core';
import { HcloudError, type HcloudClient } from '@loopwright/hcloud';
import { ConfigError } from '@loopwright/runtime';
import { classifyStartupFailure } from './startup-decision.ts';

/**
 * client-go `wait.Backoff{Duration: 1s, Factor: 2, Jitter: 0.1, Cap: 30s}`, stepping until the cap: at
 * most one attempt (log line, Event update, API request) per second at first, one per ~30 s during a
 * long outage.
 */
export const STARTUP_BACKOFF: BackoffOptions = {
  durationMs: 1000,
  factor: 2,
  steps: Infinity,
  jitter: 0.1,
  capMs: 30_000,
};

export interface StartupRetry {
  /** What was being done, e.g. `check the token`. */
  step: string;
  error: HcloudError;
  /** 1 for the first failure of this start-up. */
  attempt: number;
  retryAfterMs: number;
}

export interface HcloudStartupOptions {
  client: Pick<HcloudClient, 'endpoint' | 'validateToken' | 'getNetwork'>;
  /** The options as the user set them (`HCLOUD_TOKEN_FILE`, `--hcloud-network`...), for a rejected value. */
  names: { readonly token: string; readonly endpoint: string; readonly network: string };
  /** HCLOUD_NETWORK as configured (id or name), if set. */
  network: string | undefined;
  /**
   * One backoff for all steps, so a failure after a success does not start over at the first delay.
   * Default `new Backoff(STARTUP_BACKOFF)`.
   */
  backoff?: Pick<Backoff, 'step'>;
  /** Called once per failed attempt, before waiting `retryAfterMs`: the place to log and record an Event. */
  onRetry: (retry: StartupRetry) => void;
  /** Aborting (SIGTERM) ends the waiting; the result is then `stopped`. */
  signal: AbortSignal;
  /** Injected by unit tests; default: a real timer that ends early on abort. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export type HcloudStartupResult = { kind: 'ready'; networkId: number | undefined } | { kind: 'stopped' };

const STOPPED = Symbol('stopped');

/**
 * Resolves once the API accepted the token and (with HCLOUD_NETWORK) named the network's id.
 * @throws ConfigError when an answer rejects a value; any non-API error as it is.
 */
export async function connectToHcloud(options: HcloudStartupOptions): Promise<HcloudStartupResult> {
  const { client, signal, names } = options;
  const retrying = retryer(options);
  const checked = await retrying('check the token', () => client.validateToken({ signal }), {
    tokenRejected: (error) => new ConfigError(names.token, error.message),
    requestRejected: (error) =>
      new ConfigError(names.endpoint, `cannot check the token at ${client.endpoint}: ${error.message}`),
  });
  if (checked === STOPPED) return { kind: 'stopped' };
  const wanted = options.network;
  if (wanted === undefined) return { kind: 'ready', networkId: undefined };
  const network = await retrying(
    `look up HCLOUD_NETWORK "${wanted}"`,
    () => client.getNetwork(wanted, { signal }),
    {
      tokenRejected: (error) => new ConfigError(names.token, error.message),
      requestRejected: (error) =>
        new ConfigError(names.network, `cannot look up "${wanted}": ${error.message}`),
    },
  );
  if (network === STOPPED) return { kind: 'stopped' };
  // The API answered, by id and by name, that the project has no such network: the value is wrong.
  if (network === null)
    throw new ConfigError(names.network, `no network with id or name "${wanted}" in this project`);
  return { kind: 'ready', networkId: network.id };
}

/** The bad value each kind of rejecting answer means, at one step. */
interface Rejections {
  tokenRejected: (error: HcloudError) => ConfigError;
  requestRejected: (error: HcloudError) => ConfigError;
}

/** Runs a call until it answers, sharing one backoff and one attempt count across calls. */
function retryer(options: HcloudStartupOptions) {
  const backoff = options.backoff ?? new Backoff(STARTUP_BACKOFF);
  const wait = options.sleep ?? ((ms: number, signal: AbortSignal) => sleep(realClock, ms, signal));
  // A function, not the property: the signal changes during the awaits, which narrowing cannot see.
  const stopping = (): boolean => options.signal.aborted;
  let failures = 0;
  return async <T>(
    step: string,
    call: () => Promise<T>,
    rejections: Rejections,
  ): Promise<T | typeof STOPPED> => {
    for (;;) {
      if (stopping()) return STOPPED;
      try {
        return await call();
      } catch (error) {
        if (stopping()) return STOPPED;
        const failure = classifyStartupFailure(error);
        if (failure === 'unexpected' || !(error instanceof HcloudError)) throw error;
        if (failure === 'token-rejected') throw rejections.tokenRejected(error);
        if (failure === 'request-rejected') throw rejections.requestRejected(error);
        const retryAfterMs = backoff.step();
        options.onRetry({ step, error, attempt: ++failures, retryAfterMs });
        await wait(retryAfterMs, options.signal);
      }
    }
  };
}
