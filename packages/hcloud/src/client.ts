import { Backoff, realClock, sleep, type Clock } from '@loopwright/core';
import { HcloudError, isNotFound, isRateLimited, isRetryable, isUnauthorized } from './errors.ts';
import type { Location, Network, Server, ServerStatus } from './models.ts';
import { httpGet, type HttpGet, type HttpGetResponse } from './http-get.ts';
import type { HcloudLogger, HcloudMetrics } from './observability.ts';
import {
  nextPage,
  object,
  parseLocation,
  parseNetwork,
  parseServer,
  requiredArray,
  ShapeError,
} from './parse.ts';
import { parseRateLimit, rateLimitWaitMs, type RateLimitState } from './rate-limit.ts';

export const DEFAULT_ENDPOINT = 'https://api.hetzner.cloud/v1';

export interface HcloudClientOptions {
  /**
   * API token (read-only suffices), or a function giving the current one, called per request: a token
   * file re-read when the Secret behind it changes takes effect without a restart. Never logged, never
   * part of an error.
   */
  token: string | (() => string);
  /** Base URL including `/v1` (HCCM's `HCLOUD_ENDPOINT`). Default `https://api.hetzner.cloud/v1`. */
  endpoint?: string;
  /** Per attempt, from sending the request to the end of the body. Default 15 000 (HCCM's). */
  timeoutMs?: number;
  /** How a request is made; default {@link httpGet} (node:https). Tests wrap it to inject faults. */
  httpGet?: HttpGet;
  /**
   * Time for backoff and 429 waits, and the wall time `RateLimit-Reset` is compared with. Default the
   * real clock; tests pass a `FakeClock` with `autoAdvance` so waits take no real time.
   */
  clock?: Clock;
  metrics?: HcloudMetrics;
  logger?: HcloudLogger;
  /** Retries after a retryable failure other than 429 (so at most `maxRetries + 1` attempts). Default 3. */
  maxRetries?: number;
  /** First backoff step; doubles per retry, with jitter (see README). Default 500. */
  retryBaseDelayMs?: number;
  /** Cap of one backoff step. Default 8 000. */
  retryMaxDelayMs?: number;
  /**
   * Total time one call may spend waiting out 429s. When the next wait would exceed it, the call fails with
   * the 429 `HcloudError` instead. 0 disables waiting. Default 60 000.
   */
  maxRateLimitWaitMs?: number;
  /** Default `loopwright-hcloud/0.1.0`. */
  userAgent?: string;
  /** Called with every response's `RateLimit-*` state (also on errors that carry the headers). */
  onRateLimit?: (state: RateLimitState) => void;
}

/** Options for each call. */
export interface CallOptions {
  /** Aborts the call, including a backoff or 429 wait; it then fails with code `aborted`. */
  signal?: AbortSignal;
}

export interface ListServersOptions {
  /** Exact server name. */
  name?: string;
  /** The API's label selector, e.g. `role=worker,!legacy`. */
  labelSelector?: string;
  /** Only servers in one of these statuses. */
  status?: readonly ServerStatus[];
}

/** Largest page the API serves: fewest requests per full listing. */
const perPage = 50;

type Json = Record<string, unknown>;

/**
 * A read-only Hetzner Cloud API client: typed and validated models, all pages, retries with jittered
 * exponential backoff, 429 handling from the `RateLimit-*` headers, metrics and debug logs through
 * structural hooks. Safe to share: calls are independent (no internal queue or cache).
 */
export class HcloudClient {
  /** The base URL, without a trailing slash. */
  readonly endpoint: string;
  readonly #token: () => string;
  readonly #timeoutMs: number;
  readonly #httpGet: HttpGet;
  readonly #clock: Clock;
  readonly #metrics: HcloudMetrics | undefined;
  readonly #logger: HcloudLogger | undefined;
  readonly #maxRetries: number;
  readonly #retryBaseDelayMs: number;
  readonly #retryMaxDelayMs: number;
  readonly #maxRateLimitWaitMs: number;
  readonly #userAgent: string;
  readonly #onRateLimit: ((state: RateLimitState) => void) | undefined;
  #rateLimit: RateLimitState | undefined;

  constructor(options: HcloudClientOptions) {
    const { token } = options;
    this.#token = typeof token === 'function' ? token : () => token;
    validToken(this.#token());
    this.endpoint = (options.endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
    if (!/^https?:\/\/[^/]/.test(this.endpoint))
      throw new TypeError(`HcloudClient: endpoint must be an http(s) URL, got '${this.endpoint}'`);
    this.#timeoutMs = nonNegative('timeoutMs', options.timeoutMs ?? 15_000);
    this.#httpGet = options.httpGet ?? httpGet;
    this.#clock = options.clock ?? realClock;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#maxRetries = nonNegative('maxRetries', options.maxRetries ?? 3);
    this.#retryBaseDelayMs = nonNegative('retryBaseDelayMs', options.retryBaseDelayMs ?? 500);
    this.#retryMaxDelayMs = nonNegative('retryMaxDelayMs', options.retryMaxDelayMs ?? 8_000);
    this.#maxRateLimitWaitMs = nonNegative('maxRateLimitWaitMs', options.maxRateLimitWaitMs ?? 60_000);
    this.#userAgent = options.userAgent ?? 'loopwright-hcloud/0.1.0';
    this.#onRateLimit = options.onRateLimit;
  }

  /** The `RateLimit-*` state of the most recent response that carried it; `undefined` before the first. */
  get rateLimit(): RateLimitState | undefined {
    return this.#rateLimit;
  }

  /**
   * Streams all servers matching `filter`, fetching page after page (50 per page, by ascending id) as the
   * consumer iterates. Offset pagination: a server deleted while listing shifts later pages, so another
   * server can be skipped; one created meanwhile lands on the last page. Never conclude "gone" from a
   * listing alone: confirm with {@link getServer}.
   */
  async *iterateServers(
    filter: ListServersOptions = {},
    options: CallOptions = {},
  ): AsyncGenerator<Server, void, undefined> {
    const query = new URLSearchParams();
    if (filter.name !== undefined) query.set('name', filter.name);
    if (filter.labelSelector !== undefined) query.set('label_selector', filter.labelSelector);
    for (const status of filter.status ?? []) query.append('status', status);
    query.set('sort', 'id:asc');
    yield* this.#pages('/servers', query, 'servers', parseServer, options);
  }

  /** All servers matching `filter` (every page; see {@link iterateServers}), de-duplicated by id. */
  async listServers(filter: ListServersOptions = {}, options: CallOptions = {}): Promise<Server[]> {
    const byId = new Map<number, Server>();
    for await (const server of this.iterateServers(filter, options)) byId.set(server.id, server);
    return [...byId.values()];
  }

  /** The server, or `null` when the API answers 404 `not_found`. Any other failure throws. */
  async getServer(id: number, options: CallOptions = {}): Promise<Server | null> {
    if (!Number.isSafeInteger(id) || id < 1)
      throw new RangeError(`getServer: id must be a positive integer, got ${id}`);
    try {
      const body = await this.#request('/servers/{id}', `/servers/${id}`, undefined, options);
      return this.#shape('/servers/{id}', () => parseServer(body.server, 'server'));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** All locations. */
  async listLocations(options: CallOptions = {}): Promise<Location[]> {
    const locations: Location[] = [];
    for await (const location of this.#pages(
      '/locations',
      new URLSearchParams(),
      'locations',
      parseLocation,
      options,
    ))
      locations.push(location);
    return locations;
  }

  /**
   * Resolves a network like HCCM's `HCLOUD_NETWORK`: a number or all-digit string is tried as an id first,
   * then (strings only) as a name; `null` when neither exists.
   */
  async getNetwork(idOrName: number | string, options: CallOptions = {}): Promise<Network | null> {
    const id =
      typeof idOrName === 'number' ? idOrName : /^\d+$/.test(idOrName) ? Number(idOrName) : undefined;
    if (id !== undefined && Number.isSafeInteger(id) && id >= 1) {
      try {
        const body = await this.#request('/networks/{id}', `/networks/${id}`, undefined, options);
        return this.#shape('/networks/{id}', () => parseNetwork(body.network, 'network'));
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    if (typeof idOrName === 'number' || idOrName === '') return null;
    for await (const network of this.#pages(
      '/networks',
      new URLSearchParams({ name: idOrName }),
      'networks',
      parseNetwork,
      options,
    )) {
      if (network.name === idOrName) return network;
    }
    return null;
  }

  /**
   * Checks the token with one cheap request (`GET /locations?per_page=1`, like HCCM's start-up check).
   * @throws HcloudError with code `unauthorized` and a message saying the token was rejected.
   */
  async validateToken(options: CallOptions = {}): Promise<void> {
    try {
      await this.#request('/locations', '/locations', new URLSearchParams({ per_page: '1' }), options);
    } catch (error) {
      if (error instanceof HcloudError && isUnauthorized(error)) {
        throw new HcloudError({
          status: error.status,
          code: error.code,
          message: `the Hetzner Cloud API rejected the token (${error.status ?? '?'} ${error.code}: ${error.message})`,
          details: error.details,
          endpoint: error.endpoint,
          rateLimit: error.rateLimit,
          cause: error,
        });
      }
      throw error;
    }
  }

  /** Fetches `path` page by page, following `meta.pagination.next_page`, yielding parsed items. */
  async *#pages<T>(
    endpoint: string,
    query: URLSearchParams,
    key: string,
    parse: (value: unknown, path: string) => T,
    options: CallOptions,
  ): AsyncGenerator<T, void, undefined> {
    let page = 1;
    for (;;) {
      query.set('page', String(page));
      query.set('per_page', String(perPage));
      const body = await this.#request(endpoint, endpoint, query, options);
      const { items, next } = this.#shape(endpoint, () => {
        const list = requiredArray(body[key], key);
        const next = nextPage(body);
        // A next page that does not advance, or more pages without entries, would loop forever.
        if (next !== null && (next <= page || list.length === 0))
          throw new ShapeError(
            `meta.pagination.next_page: ${next} after page ${page} with ${list.length} entries`,
          );
        return { items: list.map((item, i) => parse(item, `${key}[${i}]`)), next };
      });
      yield* items;
      if (next === null) return;
      page = next;
    }
  }

  /** Runs a parser, turning a {@link ShapeError} into an `invalid_response` HcloudError. */
  #shape<T>(endpoint: string, parse: () => T): T {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof ShapeError)) throw error;
      throw new HcloudError({
        status: 200,
        code: 'invalid_response',
        endpoint,
        message: `unexpected response from GET ${endpoint}: ${error.message}`,
        cause: error,
      });
    }
  }

  /** One GET with retries and 429 waits; resolves with the JSON object of a 2xx answer. */
  async #request(
    endpoint: string,
    path: string,
    query: URLSearchParams | undefined,
    options: CallOptions,
  ): Promise<Json> {
    const url = `${this.endpoint}${path}${query && query.size > 0 ? `?${query.toString()}` : ''}`;
    const { signal } = options;
    let retries = 0;
    const backoff = this.#backoff();
    const rateLimitBackoff = this.#backoff();
    let rateLimitWaited = 0;
    for (let attempt = 1; ; attempt++) {
      if (signal && isAborted(signal)) throw aborted(endpoint, signal);
      let failure: HcloudError;
      try {
        return await this.#attempt(endpoint, url, attempt, signal);
      } catch (error) {
        if (!(error instanceof HcloudError)) throw error;
        failure = error;
      }
      let delayMs: number;
      if (isRateLimited(failure)) {
        delayMs = rateLimitWaitMs(failure.rateLimit, this.#clock.wallTime()) ?? rateLimitBackoff();
        if (rateLimitWaited + delayMs > this.#maxRateLimitWaitMs) throw failure;
        rateLimitWaited += delayMs;
      } else {
        if (!isRetryable(failure) || retries >= this.#maxRetries) throw failure;
        retries++;
        delayMs = backoff();
      }
      this.#logger?.warn('hcloud request failed, retrying', {
        method: 'GET',
        endpoint,
        status: failure.status,
        code: failure.code,
        attempt,
        delayMs,
      });
      // An abort ends the wait early; the loop's first line turns it into the `aborted` error.
      await sleep(this.#clock, delayMs, signal);
    }
  }

  /**
   * "Equal jitter": the n-th wait is `step/2 + random * step/2` with `step = min(max, base * 2^n)`, half
   * fixed so a retry never comes at once, half random so retries of many callers spread out. That is a
   * core Backoff from half the first step, doubling to half the cap, with jitter 1.0.
   */
  #backoff(): () => number {
    const backoff = new Backoff({
      durationMs: Math.min(this.#retryBaseDelayMs, this.#retryMaxDelayMs) / 2,
      factor: 2,
      steps: Infinity,
      capMs: this.#retryMaxDelayMs / 2,
      jitter: 1,
    });
    return () => Math.round(backoff.step());
  }

  async #attempt(
    endpoint: string,
    url: string,
    attempt: number,
    signal: AbortSignal | undefined,
  ): Promise<Json> {
    const controller = new AbortController();
    const timeoutReason = new Error('timeout');
    const timer = setTimeout(() => {
      controller.abort(timeoutReason);
    }, this.#timeoutMs);
    const onAbort = (): void => {
      controller.abort();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const started = performance.now();
    let response: HttpGetResponse;
    try {
      response = await this.#httpGet(url, {
        headers: {
          Authorization: `Bearer ${validToken(this.#token())}`,
          Accept: 'application/json',
          'User-Agent': this.#userAgent,
        },
        signal: controller.signal,
      });
    } catch (cause) {
      const code =
        controller.signal.reason === timeoutReason
          ? 'timeout'
          : isAborted(signal)
            ? 'aborted'
            : 'network_error';
      this.#observe(endpoint, code, started, attempt);
      const message =
        code === 'timeout'
          ? `GET ${endpoint}: no complete answer within ${this.#timeoutMs} ms`
          : code === 'aborted'
            ? `GET ${endpoint}: aborted`
            : `GET ${endpoint}: network error: ${this.#redact(networkCause(cause))}`;
      throw new HcloudError({ code, endpoint, message, cause });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }

    const rateLimit = parseRateLimit(response.headers, this.#clock.wallTime());
    if (rateLimit) {
      this.#rateLimit = rateLimit;
      this.#metrics?.rateLimitRemaining(rateLimit.remaining);
      this.#onRateLimit?.(rateLimit);
    }
    const { status, text } = response;
    this.#observe(endpoint, String(status), started, attempt);

    let json: unknown;
    let isJson = true;
    try {
      json = JSON.parse(text);
    } catch {
      isJson = false;
    }
    if (status >= 200 && status < 300) {
      if (!isJson)
        throw new HcloudError({
          status,
          code: 'invalid_response',
          endpoint,
          rateLimit,
          message: `GET ${endpoint}: HTTP ${status} with a body that is not JSON: ${this.#snippet(text)}`,
        });
      return this.#shape(endpoint, () => object(json, 'body'));
    }
    const apiError = isJson && typeof json === 'object' && json !== null ? (json as Json).error : undefined;
    if (typeof apiError === 'object' && apiError !== null && typeof (apiError as Json).code === 'string') {
      const { code, message, details } = apiError as Json;
      throw new HcloudError({
        status,
        code: code as string,
        endpoint,
        rateLimit,
        message: `GET ${endpoint}: ${status} ${code as string}: ${this.#redact(typeof message === 'string' ? message : '(no message)')}`,
        details: this.#redactJson(details),
      });
    }
    throw new HcloudError({
      status,
      code: 'invalid_response',
      endpoint,
      rateLimit,
      message: `GET ${endpoint}: HTTP ${status} without the API's error body: ${this.#snippet(text)}`,
    });
  }

  #observe(endpoint: string, code: string, started: number, attempt: number): void {
    const seconds = (performance.now() - started) / 1000;
    this.#metrics?.request({ code, method: 'get', api_endpoint: apiEndpointLabel(endpoint) }, seconds);
    this.#logger?.debug('hcloud request', {
      method: 'GET',
      endpoint,
      code,
      attempt,
      durationMs: Math.round(seconds * 1000),
    });
  }

  #snippet(text: string): string {
    const oneLine = this.#redact(text).replace(/\s+/g, ' ').trim();
    return JSON.stringify(oneLine.length > 120 ? `${oneLine.slice(0, 120)}...` : oneLine);
  }

  /** Text from the network or the server could echo the token (a misbehaving proxy); never pass it on. */
  #redact(text: string): string {
    return text.split(this.#token()).join('[REDACTED]');
  }

  #redactJson(value: unknown): unknown {
    if (value === undefined) return null;
    const text = JSON.stringify(value);
    return text.includes(this.#token()) ? (JSON.parse(this.#redact(text)) as unknown) : value;
  }
}

/** The token, checked before it goes into a header. Deliberately not echoing the value: it is a secret. */
function validToken(token: unknown): string {
  if (typeof token !== 'string' || !/^\S+$/.test(token))
    throw new TypeError('HcloudClient: token must be a non-empty string without whitespace');
  return token;
}

/**
 * hcloud-go's `api_endpoint` label for a templated endpoint: each `{id}` becomes `-` (`/servers/{id}` ->
 * `/servers/-`), so HCCM's dashboards and queries match this client's requests too.
 */
function apiEndpointLabel(endpoint: string): string {
  return endpoint.replace(/\{[^/}]*\}/g, '-');
}

function nonNegative(name: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0))
    throw new RangeError(`HcloudClient: ${name} must be a finite number >= 0, got ${value}`);
  return value;
}

/** A function, not `signal.aborted` inline: TypeScript would keep a narrowing across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function aborted(endpoint: string, signal: AbortSignal): HcloudError {
  return new HcloudError({
    code: 'aborted',
    endpoint,
    message: `GET ${endpoint}: aborted`,
    cause: signal.reason,
  });
}

/** The error's message, and its cause's: an error that wraps a network error (fetch's "fetch failed") hides the reason (ECONNREFUSED, ENOTFOUND...) there. */
function networkCause(error: unknown): string {
  if (error instanceof Error) {
    const inner = error.cause;
    if (inner instanceof Error && inner.message !== '') return `${error.message} (${inner.message})`;
    return error.message;
  }
  return String(error);
}
