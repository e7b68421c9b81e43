import { Counter, type Registry } from 'prom-client';

/**
 * Why a list or watch request of a reflector failed. A closed set keeps the label bounded:
 * - `expired`: 410 Gone / Expired (status or watch ERROR event); the reflector relists
 * - `timeout`: the watch delivered nothing, not even a bookmark, for longer than its timeout
 * - `network`: no HTTP response (connection refused or reset, DNS, TLS) or the stream broke mid-way
 * - `throttled`: 429 Too Many Requests
 * - `server_error`: any 5xx
 * - `client_error`: any other 4xx (401/403 usually mean missing RBAC)
 * - `other`: anything else, e.g. an undecodable event
 */
export const INFORMER_WATCH_ERROR_REASONS = [
  'expired',
  'timeout',
  'network',
  'throttled',
  'server_error',
  'client_error',
  'other',
] as const;
export type InformerWatchErrorReason = (typeof INFORMER_WATCH_ERROR_REASONS)[number];

/** The series of one informer. */
export interface ResourceInformerMetrics {
  /** A list or watch request failed: `loopwright_informer_watch_errors_total{resource,reason}` + 1. */
  watchError(reason: InformerWatchErrorReason): void;
  /** A full LIST other than the initial one started: `loopwright_informer_relists_total{resource}` + 1. */
  relisted(): void;
}

export interface InformerMetrics {
  /**
   * Creates (at 0) the series of the informer for `resource`, named as kubectl names resources:
   * `<plural>` for the core group, `<plural>.<group>` otherwise (`pods`, `leases.coordination.k8s.io`).
   * Calling it again for the same resource returns the same series without resetting them.
   */
  forResource(resource: string): ResourceInformerMetrics;
}

export function createInformerMetrics(registry: Registry): InformerMetrics {
  const watchErrors = new Counter({
    name: 'loopwright_informer_watch_errors_total',
    help: 'Total number of failed list or watch requests per informer resource, by reason.',
    labelNames: ['resource', 'reason'] as const,
    registers: [registry],
  });
  const relists = new Counter({
    name: 'loopwright_informer_relists_total',
    help: 'Total number of full lists after the initial one per informer resource.',
    labelNames: ['resource'] as const,
    registers: [registry],
  });
  return {
    forResource(resource) {
      for (const reason of INFORMER_WATCH_ERROR_REASONS) watchErrors.inc({ resource, reason }, 0);
      relists.inc({ resource }, 0);
      return {
        watchError: (reason) => {
          watchErrors.inc({ resource, reason });
        },
        relisted: () => {
          relists.inc({ resource });
        },
      };
    },
  };
}
