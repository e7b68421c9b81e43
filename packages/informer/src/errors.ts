import type { ApiStatus } from './types.ts';

/**
 * Why a list or watch attempt failed. Used as the `reason` label of the `watchError` metric hook and
 * to decide between "relist" (`gone`) and "back off and resume" (everything else).
 */
export const FailureReason = {
  /** 410 Gone / `Expired`: the resourceVersion is too old; the reflector relists. */
  Gone: 'gone',
  /**
   * 404 / `NotFound` on a list or watch: the API server does not serve the resource (e.g. its CRD is
   * not installed, or not with this version). The reflector relists once it is served again.
   */
  NotFound: 'not_found',
  /** Connection refused/reset, socket hang up, DNS, TLS. */
  Network: 'network',
  /** A list request did not complete within its timeout. */
  Timeout: 'timeout',
  /** A watch received nothing (not even a bookmark) for longer than the inactivity timeout. */
  Inactivity: 'inactivity',
  /** The server closed a watch almost at once without sending anything. */
  ShortWatch: 'short_watch',
  /** HTTP 429 or a Status with reason `TooManyRequests`. */
  Throttled: 'throttled',
  /** HTTP 401. */
  Unauthorized: 'unauthorized',
  /** HTTP 403. */
  Forbidden: 'forbidden',
  /** HTTP 5xx. */
  ServerError: 'server_error',
  /** Any other non-2xx status or watch ERROR event. */
  HttpError: 'http_error',
  /** The response was not the JSON the API server sends. */
  Decode: 'decode',
  /** A bug (an exception from our own code); reported and retried like any other failure. */
  Internal: 'internal',
} as const;
/** See {@link FailureReason}. */
export type FailureReason = (typeof FailureReason)[keyof typeof FailureReason];

/**
 * A failed list or watch attempt, classified by HTTP status / `Status.code` and `Status.reason`
 * (never by message text). The reflector never lets one escape: it reports it and retries.
 */
export class ListWatchError extends Error {
  override readonly name = 'ListWatchError';
  readonly reason: FailureReason;
  /** HTTP status or watch ERROR `Status.code`, when the server answered. */
  readonly statusCode: number | undefined;
  /** `Status.reason` (e.g. `Expired`, `TooManyRequests`), when the server sent a Status. */
  readonly statusReason: string | undefined;
  /** Server-suggested delay (`Retry-After` header or `Status.details.retryAfterSeconds`). */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    fields: {
      reason: FailureReason;
      statusCode?: number;
      statusReason?: string;
      retryAfterMs?: number;
      cause?: unknown;
    },
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.reason = fields.reason;
    this.statusCode = fields.statusCode;
    this.statusReason = fields.statusReason;
    this.retryAfterMs = fields.retryAfterMs;
  }

  /**
   * Builds the error for an HTTP error response or a watch ERROR event. 410 and reason `Expired`/`Gone`
   * are both "gone": the API server uses `410 + Expired` for a too-old resourceVersion on watch and for
   * an expired `continue` token on list.
   */
  static fromStatus(
    statusCode: number,
    status: ApiStatus | undefined,
    retryAfterHeader?: string,
  ): ListWatchError {
    const code = status?.code ?? statusCode;
    const statusReason = status?.reason;
    const retryAfterSeconds = status?.details?.retryAfterSeconds ?? parseRetryAfter(retryAfterHeader);
    return new ListWatchError(
      `${String(code)} ${statusReason ?? ''}: ${status?.message ?? 'no message'}`.trim(),
      {
        reason: classifyStatus(code, statusReason),
        statusCode: code,
        ...(statusReason === undefined ? {} : { statusReason }),
        ...(retryAfterSeconds === undefined ? {} : { retryAfterMs: retryAfterSeconds * 1000 }),
      },
    );
  }

  /** Wraps a socket-level failure (ECONNRESET, ECONNREFUSED, ENOTFOUND, TLS...). */
  static network(cause: unknown): ListWatchError {
    const code = (cause as { code?: unknown } | undefined)?.code;
    const text = cause instanceof Error ? cause.message : String(cause);
    return new ListWatchError(`network error${typeof code === 'string' ? ` ${code}` : ''}: ${text}`, {
      reason: FailureReason.Network,
      cause,
    });
  }
}

/** Maps an HTTP status / Status object to a {@link FailureReason}. */
export function classifyStatus(code: number, statusReason?: string): FailureReason {
  if (code === 410 || statusReason === 'Expired' || statusReason === 'Gone') return FailureReason.Gone;
  // A collection request has no object to be missing: a 404 means the resource type is not served.
  // Like apimachinery's IsNotFound, the code counts only without a reason (e.g. a plain-text 404).
  if (statusReason === 'NotFound' || (code === 404 && !statusReason)) return FailureReason.NotFound;
  if (code === 429 || statusReason === 'TooManyRequests') return FailureReason.Throttled;
  if (code === 401) return FailureReason.Unauthorized;
  if (code === 403) return FailureReason.Forbidden;
  if (code >= 500) return FailureReason.ServerError;
  return FailureReason.HttpError;
}

function parseRetryAfter(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

/** Normalises anything thrown by a list/watch attempt into a {@link ListWatchError}. */
export function toListWatchError(error: unknown): ListWatchError {
  if (error instanceof ListWatchError) return error;
  if (error instanceof SyntaxError) {
    return new ListWatchError(`undecodable response: ${error.message}`, {
      reason: FailureReason.Decode,
      cause: error,
    });
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return ListWatchError.network(error);
  return new ListWatchError(`unexpected error: ${error instanceof Error ? error.message : String(error)}`, {
    reason: FailureReason.Internal,
    cause: error,
  });
}

/** An event handler threw or rejected. Reported through `onError`/the logger; delivery continues. */
export class HandlerError extends Error {
  override readonly name = 'HandlerError';
  readonly resource: string;
  readonly event: 'add' | 'update' | 'delete';
  /** `namespace/name` of the object being delivered. */
  readonly key: string;

  constructor(resource: string, event: 'add' | 'update' | 'delete', key: string, cause: unknown) {
    super(
      `${resource} ${event} handler failed for ${key}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.resource = resource;
    this.event = event;
    this.key = key;
  }
}

/** `waitForSync` was pending when the informer was stopped. */
export class InformerStoppedError extends Error {
  override readonly name = 'InformerStoppedError';
}
