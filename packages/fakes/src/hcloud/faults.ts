/**
 * Fault injection for the fake Hetzner Cloud API. FakeHcloudFaults are checked before authentication and rate
 * limiting (like a load balancer or gateway failing in front of the API) and do not consume rate-limit tokens.
 */

export interface FakeHcloudFault {
  /** HTTP status to answer with. */
  status: number;
  /** Error `code` in the JSON body (default derived from the status, e.g. 503 -> `unavailable`). */
  code?: string;
  /** Error `message` in the JSON body. */
  message?: string;
  /**
   * Replaces the whole body: a string is sent as-is (`text/html`), an object as JSON. Use an object with
   * status 200 to serve arbitrary (e.g. oddly shaped) API JSON.
   */
  body?: string | object;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** How many matching requests get this fault (default 1). */
  times?: number;
  /** Only requests whose path (e.g. `/v1/servers/42`) starts with this string or matches this RegExp. */
  path?: string | RegExp;
  /**
   * No answer: the connection is reset (TCP RST), as when a load balancer or the API crashes mid-request.
   * `status` is then only what the request log records (see {@link FakeHcloudFaults.connectionReset}).
   */
  reset?: boolean;
}

interface ArmedFault {
  readonly spec: FakeHcloudFault;
  remaining: number;
}

const defaultCodes: Record<number, string> = {
  400: 'invalid_input',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  423: 'locked',
  429: 'rate_limit_exceeded',
  500: 'server_error',
  502: 'bad_gateway',
  503: 'unavailable',
  504: 'timeout',
};

/** The error code the real API uses for an HTTP status. */
export function defaultErrorCode(status: number): string {
  return defaultCodes[status] ?? (status >= 500 ? 'server_error' : 'invalid_input');
}

/** An nginx-style 502 page: what a gateway in front of the API answers when the backend is down. */
export const FAKE_HCLOUD_BAD_GATEWAY_HTML =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';

/** The fault-injection API of a running fake (`fake.faults`). */
export class FakeHcloudFaults {
  #queue: ArmedFault[] = [];
  #latencyMs = 0;
  #unauthorized = false;

  /** Queues a fault for the next `times` matching requests (faults are used in the order queued). */
  next(spec: FakeHcloudFault): void {
    const times = spec.times ?? 1;
    if (!(Number.isInteger(times) && times >= 1))
      throw new RangeError(`faults.next: times must be an integer >= 1, got ${times}`);
    this.#queue.push({ spec, remaining: times });
  }

  /** Queues non-JSON 502 Bad Gateway answers (HTML body, no rate-limit headers). */
  nonJson502(options: { times?: number; path?: string | RegExp } = {}): void {
    this.next({ status: 502, body: FAKE_HCLOUD_BAD_GATEWAY_HTML, ...options });
  }

  /** Resets the connection of the next `times` matching requests instead of answering (logged as status 0). */
  connectionReset(options: { times?: number; path?: string | RegExp } = {}): void {
    this.next({ status: 0, reset: true, ...options });
  }

  /** Delays every response by `ms` real milliseconds (0 turns it off). */
  latency(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`faults.latency: ms must be >= 0, got ${ms}`);
    this.#latencyMs = ms;
  }

  /** `true`: every request gets 401 `unauthorized`, as if the token had been revoked. */
  unauthorized(on = true): void {
    this.#unauthorized = on;
  }

  /** Removes queued faults, latency and the 401 switch. */
  clear(): void {
    this.#queue = [];
    this.#latencyMs = 0;
    this.#unauthorized = false;
  }

  /** Queued fault answers not used yet. */
  pending(): number {
    return this.#queue.reduce((sum, fault) => sum + fault.remaining, 0);
  }

  /** @internal the HTTP layer's view. */
  get latencyMs(): number {
    return this.#latencyMs;
  }

  /** @internal the HTTP layer's view. */
  get isUnauthorized(): boolean {
    return this.#unauthorized;
  }

  /** @internal takes the first queued fault that matches `path`, if any. */
  take(path: string): FakeHcloudFault | undefined {
    const index = this.#queue.findIndex(({ spec }) =>
      spec.path === undefined
        ? true
        : typeof spec.path === 'string'
          ? path.startsWith(spec.path)
          : spec.path.test(path),
    );
    const fault = this.#queue[index];
    if (!fault) return undefined;
    if (--fault.remaining === 0) this.#queue.splice(index, 1);
    return fault.spec;
  }
}
