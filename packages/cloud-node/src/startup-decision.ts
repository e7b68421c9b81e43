/**
 * What a failed start-up call to the Hetzner Cloud API means for the process: wait and try again, or
 * end start-up because the answer rejects a value the user set, which only a changed configuration (and
 * so a restart) can fix: a bad value like a malformed one, exit 2 naming it.
 *
 * The token (HCLOUD_TOKEN, or HCLOUD_TOKEN_FILE read once at start), HCLOUD_ENDPOINT and HCLOUD_NETWORK
 * are read once per process, so an answer rejecting them is the same on every retry: exiting is the only
 * way the corrected Secret or variable is picked up. Everything else (no answer, 5xx, 429, a body that
 * is not the API's JSON) is what an outage or a flaky gateway looks like, and heals on its own.
 */
import { HcloudError, isRateLimited, isUnauthorized } from '@loopwright/hcloud';

export type StartupFailure =
  /** Worth another attempt after a backoff; the process stays up and unready. */
  | 'transient'
  /** 401: the token is wrong or revoked. */
  | 'token-rejected'
  /** Another 4xx: the endpoint or the request is wrong (e.g. HCLOUD_ENDPOINT without `/v1`). */
  | 'request-rejected'
  /** Not an API failure at all: a bug, to be reported as such. */
  | 'unexpected';

export function classifyStartupFailure(error: unknown): StartupFailure {
  if (!(error instanceof HcloudError)) return 'unexpected';
  if (isUnauthorized(error)) return 'token-rejected';
  if (isRateLimited(error)) return 'transient';
  if (error.status !== undefined && error.status >= 400 && error.status < 500) return 'request-rejected';
  if (error.code === 'aborted') return 'unexpected';
  // No answer (network error, timeout), a 5xx, or a 2xx body that is not the API's JSON: a gateway or a
  // cut connection at start-up, not the schema change that makes the client refuse to retry it within
  // one call (nothing has worked yet to compare with).
  return 'transient';
}
