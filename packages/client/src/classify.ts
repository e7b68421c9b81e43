/**
 * Classifies Kubernetes API errors the way apimachinery's `k8s.io/apimachinery/pkg/api/errors` does:
 * by `Status.reason` first; by HTTP code only when the reason is not one of the reasons the API server
 * defines (a proxy's error page, a 401 without body). Never by message text.
 *
 * Every predicate accepts `unknown` and looks through `cause` chains (see {@link toKubeApiError}), so
 * `catch (e) { if (isNotFound(e)) ... }` works on any thrown value. A failure without a response
 * (network, timeout, abort) has no status and no reason, so every predicate is false for it.
 *
 * Where a code is ambiguous the code fallback is deliberately absent, exactly as in apimachinery:
 * 409 is both `AlreadyExists` and `Conflict`, so {@link isAlreadyExists} needs the reason;
 * {@link isServerTimeout} needs the reason (its code, 500, is also `InternalError`).
 */
import { toKubeApiError } from './api-error.ts';

/** `metav1.StatusReason` values (apimachinery `types.go`) and the codes the server sends with them. */
export const StatusReason = {
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'NotFound',
  AlreadyExists: 'AlreadyExists',
  Conflict: 'Conflict',
  Gone: 'Gone',
  Invalid: 'Invalid',
  ServerTimeout: 'ServerTimeout',
  StorageReadError: 'StorageReadError',
  Timeout: 'Timeout',
  TooManyRequests: 'TooManyRequests',
  BadRequest: 'BadRequest',
  MethodNotAllowed: 'MethodNotAllowed',
  NotAcceptable: 'NotAcceptable',
  RequestEntityTooLarge: 'RequestEntityTooLarge',
  UnsupportedMediaType: 'UnsupportedMediaType',
  InternalError: 'InternalError',
  Expired: 'Expired',
  ServiceUnavailable: 'ServiceUnavailable',
} as const;
export type StatusReason = (typeof StatusReason)[keyof typeof StatusReason];

const knownReasons: ReadonlySet<string> = new Set(Object.values(StatusReason));

/** true when the error's reason is `reason`, or its reason is unknown/empty and its code is `code`. */
function reasonOrUnknownWithCode(error: unknown, reason: StatusReason, code: number | undefined): boolean {
  const apiError = toKubeApiError(error);
  if (!apiError) return false;
  if (apiError.reason === reason) return true;
  return code !== undefined && !knownReasons.has(apiError.reason) && apiError.status === code;
}

/** 404 NotFound: the object (or its namespace, or the resource type) does not exist. */
export function isNotFound(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.NotFound, 404);
}

/** 409 AlreadyExists: a create hit an existing name. Reason only: 409 alone also means Conflict. */
export function isAlreadyExists(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.AlreadyExists, undefined);
}

/** 409 Conflict: optimistic concurrency failed (stale `resourceVersion`); re-read and retry. */
export function isConflict(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.Conflict, 409);
}

/**
 * 410 Gone or reason `Expired`: the requested `resourceVersion` is too old (watch, list continue token).
 * The only remedy is a fresh list. apimachinery splits this into `IsGone` and `IsResourceExpired`;
 * callers always treat both the same, so this one predicate covers both.
 */
export function isGone(error: unknown): boolean {
  return (
    reasonOrUnknownWithCode(error, StatusReason.Gone, 410) ||
    reasonOrUnknownWithCode(error, StatusReason.Expired, undefined)
  );
}

/** 403 Forbidden: RBAC denies the verb (or an admission plugin refused, e.g. a terminating namespace). */
export function isForbidden(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.Forbidden, 403);
}

/** 401 Unauthorized: the credentials are missing, expired or not accepted. */
export function isUnauthorized(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.Unauthorized, 401);
}

/**
 * 429 TooManyRequests (API priority and fairness, or the max-in-flight limit): retry after
 * `KubeApiError.retryAfterMs`. As in apimachinery, code 429 counts whatever the reason.
 */
export function isTooManyRequests(error: unknown): boolean {
  const apiError = toKubeApiError(error);
  return (
    apiError !== undefined && (apiError.reason === StatusReason.TooManyRequests || apiError.status === 429)
  );
}

/** 422 Invalid: the object failed validation; `details.causes` name the fields. Retrying will not help. */
export function isInvalid(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.Invalid, 422);
}

/** 400 BadRequest: the request itself was malformed (e.g. a patch the server cannot apply). */
export function isBadRequest(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.BadRequest, 400);
}

/** Reason `ServerTimeout` (code 500): the server could not finish in time; retry. Reason only. */
export function isServerTimeout(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.ServerTimeout, undefined);
}

/** 504 Timeout: the request's own timeout expired before the server finished; retry. */
export function isTimeout(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.Timeout, 504);
}

/** 500 InternalError. */
export function isInternalError(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.InternalError, 500);
}

/** 503 ServiceUnavailable (e.g. an aggregated API server that is down). */
export function isServiceUnavailable(error: unknown): boolean {
  return reasonOrUnknownWithCode(error, StatusReason.ServiceUnavailable, 503);
}
