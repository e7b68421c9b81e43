import type { RateLimitState } from './rate-limit.ts';

/**
 * Error codes: the API's own (`error.code` in its JSON body) and the client's for failures without one.
 * Unknown API codes pass through unchanged, hence the open `string`.
 */
export type HcloudErrorCode =
  // The API's documented codes that matter to a read-only client.
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'invalid_input'
  | 'rate_limit_exceeded'
  | 'conflict'
  | 'locked'
  | 'server_error'
  /** 502 from the API itself: its backend did not answer; hcloud-go retries it. */
  | 'bad_gateway'
  /** From the API (with a `status`), or the client's when no full answer arrived within `timeoutMs` (`status` undefined). */
  | 'timeout'
  | 'maintenance'
  | 'unavailable'
  // The client's: no usable answer.
  /** The connection failed (DNS, refused, reset...); `status` is undefined. */
  | 'network_error'
  /** A body that is not JSON (e.g. a gateway's HTML 502), or JSON not shaped like the API's. */
  | 'invalid_response'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  | (string & {});

export interface HcloudErrorInit {
  status?: number | undefined;
  code: HcloudErrorCode;
  message: string;
  details?: unknown;
  endpoint?: string | undefined;
  rateLimit?: RateLimitState | undefined;
  cause?: unknown;
}

/**
 * Every failure of an {@link HcloudClient} call. Classify with the helpers below (by `code`/`status`, never
 * by message text). Holds no request headers, so the token cannot leak through it.
 */
export class HcloudError extends Error {
  override readonly name = 'HcloudError';
  /** HTTP status, or `undefined` when no response arrived (network error, timeout, abort). */
  readonly status: number | undefined;
  readonly code: HcloudErrorCode;
  /** The API's `error.details` (e.g. `{fields: [...]}` for `invalid_input`), else `null`. */
  readonly details: unknown;
  /** The templated endpoint, e.g. `/servers/{id}`. */
  readonly endpoint: string | undefined;
  /** The `RateLimit-*` headers of the failed response, when it had them. */
  readonly rateLimit: RateLimitState | undefined;

  constructor(init: HcloudErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? null;
    this.endpoint = init.endpoint;
    this.rateLimit = init.rateLimit;
  }
}

/**
 * The API said the resource does not exist: 404 with the JSON code `not_found`. A bare 404 without the API's
 * error body (a proxy, a wrong endpoint) does NOT count: "server gone" must come from the API itself, since
 * controllers delete Nodes on it.
 */
export function isNotFound(error: unknown): boolean {
  return error instanceof HcloudError && error.status === 404 && error.code === 'not_found';
}

/** 429 / `rate_limit_exceeded`: the project's request budget is spent. */
export function isRateLimited(error: unknown): boolean {
  return error instanceof HcloudError && (error.status === 429 || error.code === 'rate_limit_exceeded');
}

/** 401 / `unauthorized`: the token is wrong or revoked. */
export function isUnauthorized(error: unknown): boolean {
  return error instanceof HcloudError && (error.status === 401 || error.code === 'unauthorized');
}

const retryableCodes: ReadonlySet<string> = new Set([
  'timeout',
  'rate_limit_exceeded',
  'conflict',
  'bad_gateway',
]);

/**
 * What hcloud-go's retry policy retries (`retryPolicy`): a timeout (the client's, or the API's code), 429
 * / `rate_limit_exceeded`, `conflict`, `bad_gateway`, and a gateway's own 502 or 504 (not the API's JSON).
 * Nothing else: not `server_error`, 503 `unavailable`, `maintenance` or `locked` (Hetzner does not want
 * those retried at once: retries would pile onto an incident), nor a refused or reset connection, any
 * other 4xx, an abort, or a malformed 2xx body. The caller's own backoff (cloud-node's sweeps) covers them.
 */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof HcloudError)) return false;
  if (retryableCodes.has(error.code) || error.status === 429) return true;
  return error.code === 'invalid_response' && (error.status === 502 || error.status === 504);
}
