/**
 * Kubernetes API errors as one typed class, built from whatever failed: a `@kubernetes/client-node`
 * `ApiException` (generated API clients) or a fetch `Response` (raw requests).
 *
 * Why not use `ApiException` directly: its `body` is the raw response text (a JSON `Status` that every
 * caller would have to parse), 401 responses carry no body at all, and its message dumps the whole body
 * and headers. `KubeApiError` parses the `Status` once and exposes `status`, `reason` and `details`, so
 * callers classify by `Status.reason` (see `classify.ts`) and never by message text.
 */

/** `metav1.StatusDetails`: which object the error is about, field causes, and a retry hint. */
export interface KubeStatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: { type?: string; message?: string; field?: string }[];
  retryAfterSeconds?: number;
}

/** The subset of `metav1.Status` the API server returns with every error response. */
export interface KubeStatus {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  details?: KubeStatusDetails;
  code?: number;
}

/** An error response from the Kubernetes API server (or a proxy in front of it). */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  /** HTTP status code of the response (`Status.code` when the body has one). */
  readonly status: number;
  /**
   * `Status.reason` (`NotFound`, `Conflict`, `AlreadyExists`, `Invalid`, ...), or `''` when the body was
   * not a `Status` (a proxy's HTML page, a 401 without body): the classifiers then fall back to the code.
   */
  readonly reason: string;
  readonly details: KubeStatusDetails | undefined;
  /**
   * Seconds the server asked us to wait before retrying (`Status.details.retryAfterSeconds`, else the
   * `Retry-After` header), as client-go's `SuggestsClientDelay`; undefined when there was no hint.
   */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    message: string,
    fields: {
      status: number;
      reason?: string;
      details?: KubeStatusDetails;
      retryAfterSeconds?: number;
      cause?: unknown;
    },
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.status = fields.status;
    this.reason = fields.reason ?? '';
    this.details = fields.details;
    this.retryAfterSeconds = fields.retryAfterSeconds;
  }

  /**
   * From a response status, its body text and headers. `request` (e.g. `PATCH /api/v1/...`) only makes the
   * message readable when the body is not a `Status`.
   */
  static fromStatusBody(
    httpStatus: number,
    body: string | undefined,
    headers: Record<string, string | undefined> | undefined,
    options: { request?: string; cause?: unknown } = {},
  ): KubeApiError {
    const parsed = parseStatus(body);
    const status = typeof parsed?.code === 'number' && parsed.code > 0 ? parsed.code : httpStatus;
    const retryAfterSeconds =
      positiveNumber(parsed?.details?.retryAfterSeconds) ?? positiveNumber(retryAfterHeader(headers));
    const what =
      options.request === undefined ? `HTTP ${httpStatus}` : `${options.request}: HTTP ${httpStatus}`;
    const message = parsed?.message
      ? `${parsed.message} (${parsed.reason ?? 'no reason'}, ${status})`
      : `${what}${body ? `: ${truncate(body, 200)}` : ''}`;
    const fields: ConstructorParameters<typeof KubeApiError>[1] = { status, cause: options.cause };
    if (parsed?.reason !== undefined) fields.reason = parsed.reason;
    if (parsed?.details !== undefined) fields.details = parsed.details;
    if (retryAfterSeconds !== undefined) fields.retryAfterSeconds = retryAfterSeconds;
    return new KubeApiError(message, fields);
  }

  /**
   * From a fetch `Response` that is not ok. Consumes the body. `request` names the call for the message.
   */
  static async fromResponse(response: Response, request?: string): Promise<KubeApiError> {
    const body = await response.text().catch(() => undefined);
    const headers: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      headers[key] = value;
    });
    return KubeApiError.fromStatusBody(
      response.status,
      body,
      headers,
      request === undefined ? {} : { request },
    );
  }
}

/**
 * Converts `error` to a {@link KubeApiError} when it is one, or is a client-node `ApiException`
 * (recognised structurally, so a second copy of client-node in node_modules still works), or wraps one
 * in its `cause` chain (like Go's `errors.As`: a reconciler may wrap API errors with context).
 * Returns undefined for anything else (network errors, bugs).
 */
export function toKubeApiError(error: unknown): KubeApiError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 16 && current !== undefined && current !== null; depth++) {
    if (current instanceof KubeApiError) return current;
    const fromException = fromApiException(current);
    if (fromException) return fromException;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** client-node's `ApiException`: `code` (HTTP status), `body` (raw text, parsed object or undefined), `headers`. */
function fromApiException(error: unknown): KubeApiError | undefined {
  if (!(error instanceof Error) || error.name === 'KubeApiError') return undefined;
  const candidate = error as Error & { code?: unknown; body?: unknown; headers?: unknown };
  if (typeof candidate.code !== 'number' || !('body' in candidate) || !('headers' in candidate))
    return undefined;
  if (candidate.code < 100 || candidate.code > 599) return undefined;
  const body =
    typeof candidate.body === 'string'
      ? candidate.body
      : candidate.body !== undefined && candidate.body !== null
        ? Buffer.isBuffer(candidate.body)
          ? candidate.body.toString('utf8')
          : JSON.stringify(candidate.body)
        : undefined;
  const headers =
    typeof candidate.headers === 'object' && candidate.headers !== null
      ? (candidate.headers as Record<string, string>)
      : undefined;
  return KubeApiError.fromStatusBody(candidate.code, body, headers, { cause: error });
}

function parseStatus(body: string | undefined): KubeStatus | undefined {
  if (!body) return undefined;
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value !== 'object' || value === null) return undefined;
    const status = value as KubeStatus;
    // Only a Status carries reason/code; any other JSON (an object echoed back by a misbehaving proxy) does not.
    return status.kind === 'Status' || typeof status.reason === 'string' ? status : undefined;
  } catch {
    return undefined;
  }
}

function retryAfterHeader(headers: Record<string, string | undefined> | undefined): number | undefined {
  if (!headers) return undefined;
  const value = headers['retry-after'] ?? headers['Retry-After'];
  // Only the delta-seconds form: the API server never sends an HTTP date here.
  return value !== undefined && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
}

function positiveNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}
