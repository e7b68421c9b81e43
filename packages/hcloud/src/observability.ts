/**
 * Structural hooks so this package needs neither prom-client nor a logger library. The controller
 * implements {@link HcloudMetrics} with prom-client and passes its winston logger as {@link HcloudLogger}.
 */

/** Metric names the controller should register for {@link HcloudMetrics}. */
export const HCLOUD_METRIC_NAMES = {
  /** Counter, labels `endpoint` (templated, e.g. `/servers/{id}`) and `code` (HTTP status or error kind). */
  requests: 'hcloud_api_requests_total',
  /** Histogram (seconds), same labels; optional. */
  requestDuration: 'hcloud_api_request_duration_seconds',
  /** Gauge: `RateLimit-Remaining` of the last response that had it. */
  rateLimitRemaining: 'hcloud_ratelimit_remaining',
} as const;

export interface HcloudMetrics {
  /**
   * Called once per HTTP attempt (retries count: each one costs API budget).
   * @param endpoint templated path, e.g. `/servers/{id}`; never a raw id, so label cardinality stays fixed.
   * @param code the HTTP status (`'200'`, `'429'`, `'502'`) or, without a response, `network_error`,
   *   `timeout` or `aborted`.
   * @param seconds real time from sending to the end of the body.
   */
  request(endpoint: string, code: string, seconds: number): void;
  /** Called whenever a response carried `RateLimit-Remaining`. */
  rateLimitRemaining(remaining: number): void;
}

/** The subset of a winston logger the client uses. Field values never contain the token. */
export interface HcloudLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}
