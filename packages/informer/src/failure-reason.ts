import {
  KubeApiError,
  KubeApiFailure,
  isForbidden,
  isGone,
  isNotFound,
  isTooManyRequests,
  isUnauthorized,
} from '@loopwright/client';

/**
 * Why a list or watch attempt failed: the `reason` of the `watchError` metric hook and of the log
 * line, and what decides between "relist" (`gone`, `not_found`) and "back off and resume".
 */
export const FailureReason = {
  /** 410 Gone / `Expired`: the resourceVersion is too old; the reflector relists. */
  Gone: 'gone',
  /**
   * 404 / `NotFound` on a list or watch: the API server does not serve the resource (e.g. its CRD is
   * not installed, or not with this version). The reflector relists once it is served again.
   */
  NotFound: 'not_found',
  /** Connection refused/reset, socket hang up, DNS, TLS, a stream cut short. */
  Network: 'network',
  /** A list request did not complete within its timeout. */
  Timeout: 'timeout',
  /** A watch received nothing (not even a bookmark) for longer than the inactivity timeout. */
  Inactivity: 'inactivity',
  /** The server closed a watch almost at once without sending anything. */
  ShortWatch: 'short_watch',
  /** HTTP 429 or a Status with reason `TooManyRequests`. */
  Throttled: 'throttled',
  /** HTTP 401 / `Unauthorized`. */
  Unauthorized: 'unauthorized',
  /** HTTP 403 / `Forbidden`. */
  Forbidden: 'forbidden',
  /** HTTP 5xx. */
  ServerError: 'server_error',
  /** Any other error status or watch ERROR event. */
  HttpError: 'http_error',
  /** The response was not the JSON the API server sends. */
  Decode: 'decode',
  /** A bug (an exception from our own code); reported and retried like any other failure. */
  Internal: 'internal',
} as const;
/** See {@link FailureReason}. */
export type FailureReason = (typeof FailureReason)[keyof typeof FailureReason];

/**
 * Classifies what a list (`phase` `list`) or watch (`watch`) attempt threw: a {@link KubeApiError} by
 * its failure kind, and an error status by `Status.reason`/code with apimachinery's predicates (never
 * by message text); anything else is a bug. A timeout of a watch is its inactivity timeout.
 */
export function failureReason(error: unknown, phase: 'list' | 'watch'): FailureReason {
  if (!(error instanceof KubeApiError)) return FailureReason.Internal;
  switch (error.failure) {
    // The reflector reports nothing once its own signal aborted; any other abort cut the connection.
    case KubeApiFailure.Network:
    case KubeApiFailure.Aborted:
      return FailureReason.Network;
    case KubeApiFailure.Timeout:
      return phase === 'watch' ? FailureReason.Inactivity : FailureReason.Timeout;
    case KubeApiFailure.Decode:
      return FailureReason.Decode;
    case KubeApiFailure.Status:
      return statusReason(error);
  }
}

function statusReason(error: KubeApiError): FailureReason {
  if (isGone(error)) return FailureReason.Gone;
  // A collection request has no object to be missing: a 404 means the resource type is not served.
  if (isNotFound(error)) return FailureReason.NotFound;
  if (isTooManyRequests(error)) return FailureReason.Throttled;
  if (isUnauthorized(error)) return FailureReason.Unauthorized;
  if (isForbidden(error)) return FailureReason.Forbidden;
  if ((error.status ?? 0) >= 500) return FailureReason.ServerError;
  return FailureReason.HttpError;
}
