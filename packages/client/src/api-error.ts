/**
 * The one error of every request to the Kubernetes API server, whatever went wrong: an error status
 * (with the `Status` object the server sent), a watch `ERROR` event, no response at all (network,
 * timeout, abort), or a response that is not the JSON the API server sends.
 *
 * Callers classify it by `Status.reason` and code with the predicates in `classify.ts`, never by
 * message text; `failure` says which of those cases it is.
 */

/** `metav1.StatusCause`: one field-level problem of an `Invalid` object. */
export interface KubeStatusCause {
  /** Go's `Type` (`FieldValueInvalid`...), which the JSON names `reason`. */
  reason?: string;
  message?: string;
  field?: string;
}

/** `metav1.StatusDetails`: which object the error is about, field causes, and a retry hint. */
export interface KubeStatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: KubeStatusCause[];
  retryAfterSeconds?: number;
}

/** `metav1.Status`: the body of every error response and the object of a watch `ERROR` event. */
export interface KubeStatus {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  details?: KubeStatusDetails;
  code?: number;
}

/** Which kind of failure a {@link KubeApiError} is. */
export const KubeApiFailure = {
  /** The server answered with an error status or a watch `ERROR` event: see `status` and `reason`. */
  Status: 'status',
  /** No complete response: connection refused or reset, DNS, TLS, a stream cut short. `cause` says what. */
  Network: 'network',
  /**
   * A deadline passed first: the request's `timeoutMs`, a watch's idle timeout, or a caller's signal
   * from `AbortSignal.timeout()` (any abort whose reason is a `TimeoutError`).
   */
  Timeout: 'timeout',
  /** The caller's signal aborted the request; `cause` is the signal's reason. */
  Aborted: 'aborted',
  /** A successful response whose body is not the JSON the API server sends. */
  Decode: 'decode',
} as const;
/** See {@link KubeApiFailure}. */
export type KubeApiFailure = (typeof KubeApiFailure)[keyof typeof KubeApiFailure];

/** Fields of a {@link KubeApiError}; `failure` defaults to `status` when `status` is set, else `network`. */
export interface KubeApiErrorFields {
  failure?: KubeApiFailure;
  status?: number;
  reason?: string;
  statusMessage?: string;
  details?: KubeStatusDetails;
  retryAfterMs?: number;
  method?: string;
  path?: string;
  cause?: unknown;
}

/** The request an error belongs to, for its message and fields. `path` excludes the query string. */
export interface KubeRequestLine {
  method: string;
  path: string;
}

export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  readonly failure: KubeApiFailure;
  /**
   * HTTP status of the response, or `Status.code` when the body carries one (a watch `ERROR` event has
   * only that); undefined when no response arrived.
   */
  readonly status: number | undefined;
  /**
   * `Status.reason` (`NotFound`, `Conflict`, `AlreadyExists`, `Invalid`...), or `''` when the body was
   * not a `Status` (a proxy's error page, a 401 without body): the classifiers then use the code.
   */
  readonly reason: string;
  /** `Status.message` as the server wrote it; `message` adds the reason and code. */
  readonly statusMessage: string | undefined;
  readonly details: KubeStatusDetails | undefined;
  /**
   * How long the server asked us to wait before retrying, in milliseconds: `Status.details.retryAfterSeconds`,
   * else the `Retry-After` header (both are whole seconds on the wire), like client-go's
   * `SuggestsClientDelay`; undefined without a hint.
   */
  readonly retryAfterMs: number | undefined;
  /** HTTP method of the failed request, when known. */
  readonly method: string | undefined;
  /** URL path of the failed request (no query string), when known. */
  readonly path: string | undefined;

  constructor(message: string, fields: KubeApiErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.failure =
      fields.failure ?? (fields.status === undefined ? KubeApiFailure.Network : KubeApiFailure.Status);
    this.status = fields.status;
    this.reason = fields.reason ?? '';
    this.statusMessage = fields.statusMessage;
    this.details = fields.details;
    this.retryAfterMs = fields.retryAfterMs;
    this.method = fields.method;
    this.path = fields.path;
  }

  /**
   * From an error response: its HTTP status, body text (a `Status`, or anything a proxy sends) and
   * `Retry-After` header.
   */
  static fromResponse(
    httpStatus: number,
    body: string,
    retryAfterHeader: string | undefined,
    request?: KubeRequestLine,
  ): KubeApiError {
    const status = parseStatus(body);
    if (status !== undefined)
      return KubeApiError.fromStatus(status, { httpStatus, retryAfterHeader, request });
    const what = request === undefined ? `HTTP ${httpStatus}` : `${describe(request)}: HTTP ${httpStatus}`;
    return new KubeApiError(body === '' ? what : `${what}: ${truncate(body, 200)}`, {
      status: httpStatus,
      ...retryAfter(undefined, retryAfterHeader),
      ...request,
    });
  }

  /**
   * From a `Status` object: an error response's body, or a watch `ERROR` event's object (which has no
   * HTTP status of its own; its code defaults to 500 like client-go's watch decoder does).
   */
  static fromStatus(
    status: KubeStatus,
    context: {
      httpStatus?: number;
      retryAfterHeader?: string | undefined;
      request?: KubeRequestLine | undefined;
    } = {},
  ): KubeApiError {
    const code =
      typeof status.code === 'number' && status.code > 0 ? status.code : (context.httpStatus ?? 500);
    const reason = typeof status.reason === 'string' ? status.reason : '';
    const statusMessage =
      typeof status.message === 'string' && status.message !== '' ? status.message : undefined;
    const message =
      statusMessage === undefined
        ? `${context.request === undefined ? '' : `${describe(context.request)}: `}HTTP ${code} ${reason}`.trim()
        : `${statusMessage} (${reason || 'no reason'}, ${code})`;
    return new KubeApiError(message, {
      status: code,
      reason,
      statusMessage,
      details: status.details,
      ...retryAfter(status.details, context.retryAfterHeader),
      ...context.request,
    });
  }

  /**
   * A request that got no (complete) response. `failure` is `timeout` when `cause` is a `TimeoutError`
   * (our own deadlines, and `AbortSignal.timeout()`), `aborted` when `aborted` is set, else `network`.
   */
  static noResponse(cause: unknown, request: KubeRequestLine, aborted: boolean): KubeApiError {
    const failure = isTimeoutError(cause)
      ? KubeApiFailure.Timeout
      : aborted
        ? KubeApiFailure.Aborted
        : KubeApiFailure.Network;
    const code = (cause as { code?: unknown } | undefined)?.code;
    const text = cause instanceof Error ? cause.message : String(cause);
    return new KubeApiError(`${describe(request)}: ${typeof code === 'string' ? `${code} ` : ''}${text}`, {
      failure,
      cause,
      ...request,
    });
  }

  /** A successful response whose body could not be decoded (`cause` says why). */
  static undecodable(httpStatus: number, cause: unknown, request: KubeRequestLine): KubeApiError {
    const text = cause instanceof Error ? cause.message : String(cause);
    return new KubeApiError(`${describe(request)}: undecodable response: ${text}`, {
      failure: KubeApiFailure.Decode,
      status: httpStatus,
      cause,
      ...request,
    });
  }
}

/**
 * The {@link KubeApiError} in `error` or its `cause` chain (Go's `errors.As`: a reconciler may wrap
 * API errors with context), or undefined for anything else.
 */
export function toKubeApiError(error: unknown): KubeApiError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 16 && current instanceof Error; depth++) {
    if (current instanceof KubeApiError) return current;
    current = current.cause;
  }
  return undefined;
}

function isTimeoutError(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

function describe(request: KubeRequestLine): string {
  return `${request.method} ${request.path}`;
}

function parseStatus(body: string): KubeStatus | undefined {
  try {
    // Any JSON may come back (an object echoed by a proxy, a number; `null`, whose fields throw): only a
    // Status carries reason/code.
    const status = JSON.parse(body) as KubeStatus;
    return status.kind === 'Status' || typeof status.reason === 'string' ? status : undefined;
  } catch {
    return undefined;
  }
}

function retryAfter(
  details: KubeStatusDetails | undefined,
  header: string | undefined,
): { retryAfterMs?: number } {
  const fromDetails = details?.retryAfterSeconds ?? 0;
  if (Number.isFinite(fromDetails) && fromDetails > 0) return { retryAfterMs: fromDetails * 1000 };
  // Only the delta-seconds form: the API server never sends an HTTP date here.
  if (header !== undefined && /^\d+$/.test(header.trim()) && Number(header) > 0) {
    return { retryAfterMs: Number(header) * 1000 };
  }
  return {};
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}
