/**
 * Structural hooks so this package needs neither prom-client nor a logger library. The controller
 * implements {@link HcloudMetrics} with prom-client and passes its winston logger as {@link HcloudLogger}.
 */

/** Metric names the controller should register for {@link HcloudMetrics}. */
export const HCLOUD_METRIC_NAMES = {
  /** Counter, labels {@link HCLOUD_REQUEST_LABEL_NAMES}: hcloud-go's (HCCM's) metric, for its dashboards. */
  requests: 'hcloud_api_requests_total',
  /** Histogram (seconds), same labels; optional. */
  requestDuration: 'hcloud_api_request_duration_seconds',
  /** Gauge: `RateLimit-Remaining` of the last response that had it. */
  rateLimitRemaining: 'hcloud_ratelimit_remaining',
} as const;

/** hcloud-go's label names of `hcloud_api_requests_total`, in its order. */
export const HCLOUD_REQUEST_LABEL_NAMES = ['code', 'method', 'api_endpoint'] as const;

/** The labels of one request, named as hcloud-go's instrumentation names them. */
export interface HcloudRequestLabels {
  /**
   * The HTTP status (`'200'`, `'429'`, `'502'`) or, without a response, `network_error`, `timeout` or
   * `aborted` (hcloud-go does not count those attempts; here they show up instead of vanishing).
   */
  code: string;
  /** The HTTP method in lower case, as hcloud-go: always `get` (the client only reads). */
  method: string;
  /**
   * The path as hcloud-go labels it: without `/v1` and the query, ids replaced by `-` (`/servers`,
   * `/servers/-`), so label cardinality stays fixed.
   */
  api_endpoint: string;
}

export interface HcloudMetrics {
  /**
   * Called once per HTTP attempt (retries count: each one costs API budget).
   * @param seconds real time from sending to the end of the body.
   */
  request(labels: HcloudRequestLabels, seconds: number): void;
  /** Called whenever a response carried `RateLimit-Remaining`. */
  rateLimitRemaining(remaining: number): void;
}

/** The subset of a winston logger the client uses. Field values never contain the token. */
export interface HcloudLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}
