/**
 * `KubeTransport`: the one way Loopwright talks to the API server. Every request of a controller goes
 * through one (generated API clients, raw JSON requests, informers' lists and watches, Lease renewals).
 *
 * Per request it applies the KubeConfig (`applyToHTTPSOptions`: CA, client certificate, bearer token
 * re-read or re-fetched by exec plugins, so rotating credentials keep working; one application serves
 * the requests of a second, see {@link AppliedKubeConfig}), waits for a token of the
 * client-side rate limiter (client-go's QPS/Burst, with a {@link RequestPriority} among waiters), sends
 * it again when the server answers 429 or a 5xx with `Retry-After` (client-go's retry: after that
 * delay, at most 10 times, within the request's deadline), reports the outcome to an observer
 * (`rest_client_*` metrics), and turns every failure into a {@link KubeApiError}: an error status with
 * the server's `Status`, no response (network, timeout, abort), or an undecodable body.
 *
 * Connections are kept alive in an agent of the transport's own (client-node's per-KubeConfig agent
 * closes every connection after use); a proxied cluster keeps client-node's proxy agent.
 */
import http from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import type { KubeConfig } from '@kubernetes/client-node';
import { realClock, sleep, type Clock, type Timer } from '@loopwright/core';
import { KubeApiError, type KubeRequestLine } from './api-error.ts';
import { AppliedKubeConfig } from './applied-config.ts';
import { LineDecoder } from './line-decoder.ts';
import {
  decodeStatus,
  FrameDecoder,
  isProtobufMediaType,
  PROTOBUF_MEDIA_TYPE,
  unwrapObject,
  type ProtobufObject,
} from './protobuf.ts';
import { TokenBucket, type RequestPriority } from './token-bucket.ts';

/**
 * How often one request is sent again when the server asks for it with `Retry-After` (client-go's
 * `maxRetries` default); the last answer is then returned as it is.
 */
const MAX_RETRIES = 10;

/** One request to the API server. */
export interface KubeRequest {
  /** Default `GET`. */
  method?: string;
  /** Below the server's URL, starting with `/`, query included: `/api/v1/namespaces/x/pods?limit=500`. */
  path: string;
  /** Sent as given, after `User-Agent` and before the KubeConfig's credentials. */
  headers?: Record<string, string>;
  /** Text (JSON) or bytes (protobuf), sent as given with the `Content-Type` the headers name. */
  body?: string | Uint8Array;
  /** Aborting it fails the request with a {@link KubeApiError} whose `failure` is `aborted`. */
  signal?: AbortSignal;
  /**
   * Deadline of the whole request, from the moment it first has its rate-limiter token (and, at
   * `background` priority, its quiet) until its last byte, retries included; then it fails with
   * `failure` `timeout`. As client-go's `Request.Timeout`, which throttles the first try before its
   * timeout starts: a throttled client must not time out requests it never sent. Default: none.
   */
  timeoutMs?: number;
  /**
   * Its place among requests waiting for a rate-limiter token. Default `normal`. A `background` request
   * is moreover sent only once no other request of this transport has been on its way (waiting for a
   * token, waiting to retry, or waiting for its response headers) for {@link BACKGROUND_QUIET_MS}, or
   * after {@link BACKGROUND_MAX_WAIT_MS} of waiting for that: a diagnostic then competes with reconciles
   * for the server only when they never pause.
   */
  priority?: RequestPriority;
}

/** A streaming request: a watch. It takes no rate-limiter token (client-go does not rate-limit watches). */
export interface KubeWatchRequest extends KubeRequest {
  /**
   * If nothing at all arrives for this long (not even part of a line) once the request is sent,
   * response headers included, the connection is considered dead and the watch fails with `failure`
   * `timeout`. A half-open connection would otherwise hang forever. Each attempt of a request sent again
   * after `Retry-After` has its own wait; the wait to send it again does not count. Default: none.
   */
  idleTimeoutMs?: number;
  /**
   * Ask for protobuf (`application/vnd.kubernetes.protobuf`) and yield each frame's bytes, one
   * `metav1.WatchEvent` message each (see `protobuf.ts`), instead of each line's JSON. Built-in
   * kinds only: the API server refuses it for custom resources (406).
   */
  protobuf?: boolean;
}

/** A response read to its end: a 2xx one, except from {@link KubeTransport.send}. */
export interface KubeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request, reported when its response headers arrive or it fails; a watch counts once, at its start. */
export interface RestRequestObservation {
  /** HTTP method as sent (`GET`, `PATCH`...): the `method` and `verb` labels. */
  method: string;
  /** `host[:port]` of the API server: never a path, so label cardinality stays bounded. */
  host: string;
  /** URL path of the request, without the query. */
  path: string;
  /** HTTP status; undefined when no response arrived (network error, timeout, abort): client-go's `<error>`. */
  statusCode: number | undefined;
  /** From handing the request to the network until the response headers (or the failure); excludes the limiter wait. */
  durationSeconds: number;
}

/** How long one request waited for a rate-limiter token (client-go's `rest_client_rate_limiter_duration_seconds`). */
export interface RateLimiterWaitObservation {
  method: string;
  host: string;
  durationSeconds: number;
}

/**
 * Receives request outcomes. Structural, so `metrics.restClient` from `@loopwright/metrics` plugs in
 * directly. Its exceptions are ignored: metrics must never fail a request.
 */
export interface RestClientObserver {
  observeRequest(request: RestRequestObservation): void;
  observeRateLimiterWait?(wait: RateLimiterWaitObservation): void;
}

export interface KubeTransportOptions {
  /**
   * Client-side rate limit, client-go's `rest.Config.QPS`/`Burst` (a token bucket, see
   * {@link TokenBucket}). Default 20 qps, burst 30: controller-runtime's defaults. `false`: no limit.
   */
  rateLimit?: { qps: number; burst: number } | false;
  observer?: RestClientObserver;
  /** Sent as `User-Agent` unless a request sets its own. Default `loopwright`. */
  userAgent?: string;
  /** Times the rate limiter, deadlines and idle timeouts. Default the real clock. */
  clock?: Clock;
}

/** Totals since the transport was created, for benchmarks and tests. */
export interface KubeTransportStats {
  /** Requests sent (including failed ones; not those aborted while waiting for a token). */
  requests: number;
  /** Requests that had to wait for a rate-limiter token. */
  throttledRequests: number;
  /** Sum of all rate-limiter waits, in seconds. */
  rateLimiterWaitSeconds: number;
}

/**
 * How long a transport must have had no other request on its way before a `background` one is sent. The
 * requests of a burst follow each other more closely than this, so the burst's diagnostics wait for its
 * end instead of taking the server's time from it. Short enough that steady traffic with ordinary gaps
 * (a request every 50 ms, say) does not starve them; a lone reconcile's Event goes this much later.
 */
export const BACKGROUND_QUIET_MS = 20;

/**
 * How long a `background` request waits for {@link BACKGROUND_QUIET_MS} of quiet before it is sent
 * anyway: a transport that is never quiet (a controller busy for minutes) must still write its
 * diagnostics, late rather than never. The Event recorder sends one write at a time, so under constant
 * load its Events go at one per this period, a load no reconcile notices.
 */
export const BACKGROUND_MAX_WAIT_MS = 2_000;

/** Largest error body read; a `Status` is a few KiB, anything bigger is not one and is cut off. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** client-go's dialer keeps TCP connections alive with probes after 30 s idle. */
const KEEP_ALIVE_MS = 30_000;

export class KubeTransport {
  readonly kubeConfig: KubeConfig;
  /** The API server's base URL, without a trailing slash. */
  readonly server: string;
  /** `host[:port]` of the API server: the metrics' `host` label. */
  readonly host: string;
  readonly #limiter: TokenBucket | undefined;
  readonly #observer: RestClientObserver | undefined;
  readonly #userAgent: string;
  readonly #clock: Clock;
  /** Where requests go: the server's scheme, host and port, and its path (a prefix of every request's). */
  readonly #target: { protocol: string; hostname: string; port: string; pathPrefix: string };
  readonly #agent: http.Agent | undefined;
  readonly #appliedConfig: AppliedKubeConfig;
  readonly #stats: KubeTransportStats = { requests: 0, throttledRequests: 0, rateLimiterWaitSeconds: 0 };
  /** Requests above `background` priority between their start and their response headers. */
  #busy = 0;
  /** When {@link #busy} last fell to 0, on the clock's monotonic scale. */
  #quietSince = Number.NEGATIVE_INFINITY;
  /** Wakes the {@link #idleWaiters} once the transport has been quiet for {@link BACKGROUND_QUIET_MS}. */
  #quietTimer: Timer | undefined;
  /** `background` requests waiting for the transport to be quiet. */
  readonly #idleWaiters = new Set<() => void>();

  constructor(kubeConfig: KubeConfig, options: KubeTransportOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster?.server)
      throw new Error('KubeTransport: the KubeConfig has no current cluster with a server');
    this.kubeConfig = kubeConfig;
    this.server = cluster.server.replace(/\/+$/, '');
    const url = new URL(this.server);
    this.host = url.host;
    this.#target = {
      protocol: url.protocol,
      // An IPv6 literal is bracketed in a URL, not in a socket address.
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port,
      pathPrefix: url.pathname.replace(/\/+$/, ''),
    };
    this.#clock = options.clock ?? realClock;
    this.#appliedConfig = new AppliedKubeConfig(kubeConfig, this.#clock);
    const rateLimit = options.rateLimit ?? { qps: 20, burst: 30 };
    this.#limiter = rateLimit === false ? undefined : new TokenBucket({ ...rateLimit, clock: this.#clock });
    this.#observer = options.observer;
    this.#userAgent = options.userAgent ?? 'loopwright';
    const agentOptions = { keepAlive: true, keepAliveMsecs: KEEP_ALIVE_MS };
    this.#agent =
      cluster.proxyUrl !== undefined
        ? undefined
        : url.protocol === 'http:'
          ? new http.Agent(agentOptions)
          : new KubeHttpsAgent(agentOptions);
  }

  /** Sends `request` and reads the whole response. Rejects with a {@link KubeApiError} unless 2xx. */
  async request(request: KubeRequest): Promise<KubeResponse> {
    return this.#read(request, false);
  }

  /**
   * Like `fetch`: resolves with the whole response whatever its HTTP status; rejects with a
   * {@link KubeApiError} only when no complete response arrived (network, timeout, abort). For callers
   * that want an error status as it is (tests of the wire format, server-side apply).
   */
  async send(request: KubeRequest): Promise<KubeResponse> {
    return this.#read(request, true);
  }

  async #read(request: KubeRequest, anyStatus: boolean): Promise<KubeResponse> {
    const { exchange, response } = await this.#open(request, { anyStatus, rateLimited: true });
    try {
      const body = await readBody(response, Infinity);
      return { status: response.statusCode ?? 0, headers: response.headers, body };
    } catch (error) {
      throw exchange.toError(error);
    } finally {
      exchange.close();
    }
  }

  /**
   * A JSON request: sends `body` serialised with `contentType` (default `application/json`), resolves
   * with the parsed response (`undefined` for an empty body). Rejects with a {@link KubeApiError}
   * unless 2xx; `failure` `decode` when the response is not JSON.
   */
  async requestJson<T>(
    request: Omit<KubeRequest, 'body'> & { body?: unknown; contentType?: string },
  ): Promise<T> {
    const { body, contentType, ...rest } = request;
    const headers: Record<string, string> = { Accept: 'application/json', ...request.headers };
    if (body !== undefined) headers['Content-Type'] = contentType ?? 'application/json';
    const response = await this.request({
      ...rest,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (response.body.length === 0) return undefined as T;
    try {
      return JSON.parse(response.body.toString('utf8')) as T;
    } catch (error) {
      throw KubeApiError.undecodable(response.status, error, requestLine(this.server, rest));
    }
  }

  /**
   * A watch (or any newline-delimited JSON stream): yields each document as the server sends it and
   * ends when the server ends the response (with `protobuf`, each frame's bytes). Throws a {@link KubeApiError} for an error status, a
   * connection that fails or stays silent beyond `idleTimeoutMs`, an abort, a line that is not JSON,
   * or a stream cut in the middle of a line. Stopping the iteration early closes the connection.
   */
  async *watch(request: KubeWatchRequest): AsyncGenerator<unknown, void, undefined> {
    // No rate-limiter token, as client-go's Request.Watch: a watch is one long request, and an
    // informer's re-watch must not queue behind reconciles' writes.
    const protobuf = request.protobuf === true;
    const { exchange, response } = await this.#open(
      protobuf ? { ...request, headers: { ...request.headers, Accept: PROTOBUF_MEDIA_TYPE } } : request,
      { idleTimeoutMs: request.idleTimeoutMs, anyStatus: false, rateLimited: false },
    );
    try {
      const contentType = header(response, 'content-type');
      if (protobuf && !isProtobufMediaType(contentType)) {
        throw KubeApiError.undecodable(
          response.statusCode ?? 0,
          new Error(`asked for protobuf, the server sent ${contentType ?? 'no Content-Type'}`),
          exchange.line,
        );
      }
      const stream = protobuf ? protobufFrames() : jsonLines();
      for await (const chunk of response as AsyncIterable<Buffer>) {
        exchange.heardFrom();
        for (const piece of stream.split(chunk)) {
          let document: unknown;
          try {
            document = stream.decode(piece);
          } catch (error) {
            throw KubeApiError.undecodable(response.statusCode ?? 0, error, exchange.line);
          }
          yield document;
        }
      }
      const unfinished = stream.unfinished();
      if (unfinished !== undefined) {
        throw KubeApiError.noResponse(
          new Error(`stream ended in the middle of a ${unfinished}`),
          exchange.line,
          false,
        );
      }
    } catch (error) {
      throw exchange.toError(error);
    } finally {
      exchange.close();
    }
  }

  /** Request totals so far (a copy). */
  stats(): KubeTransportStats {
    return { ...this.#stats };
  }

  /** Closes the kept-alive connections. Requests after `close()` open new ones. */
  close(): void {
    this.#agent?.destroy();
  }

  /**
   * Waits for a token (when `rateLimited`), sends, and resolves once response headers arrived: 2xx
   * ones, or any with `anyStatus`. Every failure on the way is a {@link KubeApiError}; for an error status its body is
   * read (up to {@link MAX_ERROR_BODY_BYTES}).
   */
  async #open(
    request: KubeRequest,
    how: { idleTimeoutMs?: number | undefined; anyStatus: boolean; rateLimited: boolean },
  ): Promise<{ exchange: Exchange; response: http.IncomingMessage }> {
    const { idleTimeoutMs, anyStatus, rateLimited } = how;
    const method = (request.method ?? 'GET').toUpperCase();
    if (!request.path.startsWith('/')) {
      throw new TypeError(`KubeTransport: path must start with "/", got "${request.path}"`);
    }
    const path = requestPath(this.#target.pathPrefix, request.path);
    const exchange = new Exchange(this.#clock, { method, path: path.replace(/\?.*$/, '') }, request);
    const priority = request.priority ?? 'normal';
    if (priority !== 'background') this.#busied();
    try {
      if (priority === 'background') await this.#idle(exchange.signal);
      let response: http.IncomingMessage;
      for (let retries = 0; ; retries++) {
        if (rateLimited) await this.#throttle(method, exchange.signal, priority);
        exchange.startDeadline();
        if (idleTimeoutMs !== undefined) exchange.expectDataEvery(idleTimeoutMs);
        const options = await this.#requestOptions(method, path, request);
        exchange.signal.throwIfAborted();
        response = await this.#dispatch(options, request.body, exchange);
        const retryAfterMs =
          retries < MAX_RETRIES ? serverRetryAfterMs(response.statusCode ?? 0, response) : undefined;
        if (retryAfterMs === undefined) break;
        // Drained, so the kept-alive connection serves the retry.
        response.resume();
        // Silence while waiting to retry is no dead connection: the next attempt arms the timer again.
        exchange.stopExpectingData();
        await sleep(this.#clock, retryAfterMs, exchange.signal);
        exchange.signal.throwIfAborted();
      }
      const status = response.statusCode ?? 0;
      if (!anyStatus && (status < 200 || status > 299)) {
        const body = await readBody(response, MAX_ERROR_BODY_BYTES);
        throw errorOf(status, body, response, exchange.line);
      }
      return { exchange, response };
    } catch (error) {
      exchange.close();
      throw exchange.toError(error);
    } finally {
      if (priority !== 'background') this.#settled();
    }
  }

  /**
   * Resolves once no other request has been on its way for {@link BACKGROUND_QUIET_MS}, or after
   * {@link BACKGROUND_MAX_WAIT_MS} of waiting for that.
   */
  #idle(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#quiet()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const stopWaiting = (): void => {
        this.#idleWaiters.delete(wake);
        signal.removeEventListener('abort', onAbort);
        longest.cancel();
      };
      const onAbort = (): void => {
        stopWaiting();
        reject(signal.reason as Error);
      };
      const wake = (): void => {
        stopWaiting();
        resolve();
      };
      const longest = this.#clock.setTimer(wake, BACKGROUND_MAX_WAIT_MS, { unref: true });
      signal.addEventListener('abort', onAbort, { once: true });
      this.#idleWaiters.add(wake);
      this.#armQuietTimer();
    });
  }

  #quiet(): boolean {
    return this.#busy === 0 && this.#clock.now() - this.#quietSince >= BACKGROUND_QUIET_MS;
  }

  #busied(): void {
    this.#busy += 1;
    this.#quietTimer?.cancel();
    this.#quietTimer = undefined;
  }

  #settled(): void {
    this.#busy -= 1;
    if (this.#busy > 0) return;
    this.#quietSince = this.#clock.now();
    this.#armQuietTimer();
  }

  #armQuietTimer(): void {
    if (this.#quietTimer !== undefined || this.#busy > 0 || this.#idleWaiters.size === 0) return;
    const delayMs = this.#quietSince + BACKGROUND_QUIET_MS - this.#clock.now();
    this.#quietTimer = this.#clock.setTimer(
      () => {
        this.#quietTimer = undefined;
        if (!this.#quiet()) {
          this.#armQuietTimer();
          return;
        }
        const waiters = [...this.#idleWaiters];
        this.#idleWaiters.clear();
        for (const wake of waiters) wake();
      },
      delayMs,
      { unref: true },
    );
  }

  async #throttle(method: string, signal: AbortSignal, priority: RequestPriority): Promise<void> {
    if (this.#limiter === undefined) return;
    const waitedMs = await this.#limiter.wait(signal, priority);
    if (waitedMs > 0) {
      this.#stats.throttledRequests += 1;
      this.#stats.rateLimiterWaitSeconds += waitedMs / 1000;
    }
    const observer = this.#observer;
    if (observer?.observeRateLimiterWait !== undefined) {
      const wait = { method, host: this.host, durationSeconds: waitedMs / 1000 };
      isolated(() => {
        observer.observeRateLimiterWait?.(wait);
      });
    }
  }

  async #requestOptions(method: string, path: string, request: KubeRequest): Promise<https.RequestOptions> {
    const headers: http.OutgoingHttpHeaders = { 'User-Agent': this.#userAgent, ...request.headers };
    if (request.body !== undefined) headers['Content-Length'] = Buffer.byteLength(request.body);
    const { protocol, hostname, port } = this.#target;
    const options: https.RequestOptions = { protocol, hostname, method, path, headers };
    if (port !== '') options.port = port;
    await this.#appliedConfig.applyTo(options);
    // TLS material stays on the request options: the agent pools connections per CA/certificate/key,
    // so a rotated client certificate gets a connection of its own.
    if (this.#agent !== undefined) options.agent = this.#agent;
    return options;
  }

  #dispatch(
    options: https.RequestOptions,
    body: string | Uint8Array | undefined,
    exchange: Exchange,
  ): Promise<http.IncomingMessage> {
    this.#stats.requests += 1;
    const started = performance.now();
    let observed = false;
    // A socket error after the response headers reaches the request too; it was observed already.
    const observe = (statusCode: number | undefined): void => {
      const observer = this.#observer;
      if (observer === undefined || observed) return;
      observed = true;
      const observation: RestRequestObservation = {
        method: exchange.line.method,
        host: this.host,
        path: exchange.line.path,
        statusCode,
        durationSeconds: (performance.now() - started) / 1000,
      };
      isolated(() => {
        observer.observeRequest(observation);
      });
    };
    return new Promise((resolve, reject) => {
      const send = options.protocol === 'http:' ? http.request : https.request;
      const request = send(options, (response) => {
        observe(response.statusCode);
        exchange.responded(response);
        resolve(response);
      });
      request.on('error', (error) => {
        observe(undefined);
        reject(error);
      });
      exchange.sent(request);
      request.end(body);
    });
  }
}

/**
 * The life of one request: its abort controller (fed by the caller's signal, the deadline and the
 * idle timer), the HTTP request and response to tear down, and the translation of whatever ended it
 * into a {@link KubeApiError}.
 */
class Exchange {
  readonly line: KubeRequestLine;
  readonly #clock: Clock;
  readonly #controller = new AbortController();
  readonly #callerSignal: AbortSignal | undefined;
  readonly #onCallerAbort = (): void => {
    this.#controller.abort(this.#callerSignal?.reason);
  };
  readonly #timeoutMs: number | undefined;
  #deadline: Timer | undefined;
  #idle: { timer: Timer; ms: number } | undefined;
  #request: http.ClientRequest | undefined;
  #response: http.IncomingMessage | undefined;

  constructor(clock: Clock, line: KubeRequestLine, request: KubeRequest) {
    this.#clock = clock;
    this.line = line;
    this.#callerSignal = request.signal;
    this.#controller.signal.addEventListener('abort', () => {
      this.#tearDown(this.#controller.signal.reason);
    });
    if (request.signal?.aborted === true) this.#onCallerAbort();
    else request.signal?.addEventListener('abort', this.#onCallerAbort, { once: true });
    this.#timeoutMs = request.timeoutMs;
  }

  /** Starts the request's `timeoutMs`, once: when it first has its token. Retries run on the same one. */
  startDeadline(): void {
    const timeoutMs = this.#timeoutMs;
    if (timeoutMs === undefined || this.#deadline !== undefined || this.#controller.signal.aborted) return;
    this.#deadline = this.#clock.setTimer(() => {
      this.#controller.abort(new DOMException(`no complete response within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
  }

  /** Aborts when any source does: the caller, the deadline, the idle timer. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Fails the exchange when `ms` pass without any data; every {@link heardFrom} starts the wait over. */
  expectDataEvery(ms: number): void {
    // Armed once per attempt of a retried request: an earlier attempt's timer must not outlive it.
    this.stopExpectingData();
    this.#idle = { timer: this.#armIdle(ms), ms };
  }

  /** Cancels the idle timer until the next {@link expectDataEvery}. */
  stopExpectingData(): void {
    this.#idle?.timer.cancel();
    this.#idle = undefined;
  }

  heardFrom(): void {
    if (this.#idle === undefined) return;
    this.#idle.timer.cancel();
    this.#idle.timer = this.#armIdle(this.#idle.ms);
  }

  sent(request: http.ClientRequest): void {
    this.#request = request;
    if (this.#controller.signal.aborted) request.destroy(asError(this.#controller.signal.reason));
  }

  responded(response: http.IncomingMessage): void {
    this.#response = response;
    this.heardFrom();
  }

  /** What ended the exchange, as a {@link KubeApiError}: an abort source's reason wins over the socket error it caused. */
  toError(error: unknown): KubeApiError {
    if (error instanceof KubeApiError) return error;
    if (this.#controller.signal.aborted) {
      return KubeApiError.noResponse(
        this.#controller.signal.reason,
        this.line,
        this.#callerSignal?.aborted === true,
      );
    }
    return KubeApiError.noResponse(error, this.line, false);
  }

  /** Stops the timers and frees the connection unless the response was read to its end (then it is reused). */
  close(): void {
    this.#deadline?.cancel();
    this.#idle?.timer.cancel();
    this.#callerSignal?.removeEventListener('abort', this.#onCallerAbort);
    if (this.#response !== undefined && !this.#response.complete) this.#response.destroy();
    else if (this.#response === undefined) this.#request?.destroy();
  }

  #armIdle(ms: number): Timer {
    return this.#clock.setTimer(() => {
      this.#controller.abort(
        new DOMException(`nothing received for ${ms} ms; connection considered dead`, 'TimeoutError'),
      );
    }, ms);
  }

  #tearDown(reason: unknown): void {
    const error = asError(reason);
    this.#response?.destroy(error);
    this.#request?.destroy(error);
  }
}

/** How a watch's bytes become its documents: split as they arrive, then each decoded. */
interface WatchStream {
  split(chunk: Buffer): Iterable<Buffer | string>;
  /** Throws for a piece that is no document. */
  decode(piece: Buffer | string): unknown;
  /** What a piece is called when one was left unfinished at the end, else undefined. */
  unfinished(): string | undefined;
}

/** One JSON document per line; blank lines are none. */
function jsonLines(): WatchStream {
  const text = new StringDecoder('utf8');
  const lines = new LineDecoder();
  return {
    split: (chunk) => lines.push(text.write(chunk)).filter((line) => line.trim() !== ''),
    decode: (line) => JSON.parse(line as string) as unknown,
    unfinished: () => ((lines.end() + text.end()).trim() === '' ? undefined : 'line'),
  };
}

/** Length-prefixed frames, each a `WatchEvent` message the caller decodes (see `protobuf.ts`). */
function protobufFrames(): WatchStream {
  const frames = new FrameDecoder();
  return {
    split: (chunk) => frames.push(chunk),
    decode: (frame) => frame,
    unfinished: () => (frames.pendingBytes() === 0 ? undefined : 'frame'),
  };
}

/** The error an error status stands for: its body's `Status` (JSON, or protobuf when asked for). */
function errorOf(
  status: number,
  body: Buffer,
  response: http.IncomingMessage,
  line: KubeRequestLine,
): KubeApiError {
  const retryAfterHeader = header(response, 'retry-after');
  if (isProtobufMediaType(header(response, 'content-type'))) {
    let object: ProtobufObject | undefined;
    try {
      object = unwrapObject(body);
    } catch {
      // Not an object after all: said as an undecodable body below.
    }
    if (object?.kind === 'Status') {
      return KubeApiError.fromStatus(decodeStatus(object), {
        httpStatus: status,
        retryAfterHeader,
        request: line,
      });
    }
    return KubeApiError.fromResponse(
      status,
      `(${body.length} bytes of protobuf, not a Status)`,
      retryAfterHeader,
      line,
    );
  }
  return KubeApiError.fromResponse(status, body.toString('utf8'), retryAfterHeader, line);
}

/**
 * Reads a response to its end, or its first `maxBytes` (the rest is dropped with the connection). With
 * listeners rather than `for await`, whose async iterator costs promises on every request.
 */
function readBody(response: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (error: Error | undefined): void => {
      response.off('data', onData).off('end', onEnd).off('error', onError);
      if (error === undefined) resolve(Buffer.concat(chunks, size).subarray(0, maxBytes));
      else reject(error);
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) settle(undefined);
    };
    const onEnd = (): void => {
      settle(undefined);
    };
    // A body cut off before its last byte (by the server, the deadline or an abort) ends in an error.
    const onError = (error: Error): void => {
      settle(error);
    };
    response.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/**
 * client-go's `checkWait`: a 429 (API Priority and Fairness rejected the request before executing it)
 * or a 5xx that carries `Retry-After` (whole seconds) asks the client to send the same request again
 * after that delay. Anything else is the answer.
 */
function serverRetryAfterMs(status: number, response: http.IncomingMessage): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  const value = header(response, 'retry-after')?.trim();
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value) * 1000;
}

function header(response: http.IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function requestLine(server: string, request: KubeRequest): KubeRequestLine {
  return { method: (request.method ?? 'GET').toUpperCase(), path: new URL(server + request.path).pathname };
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

function isolated(hook: () => void): void {
  try {
    hook();
  } catch {
    // An observer is for metrics; it must never break a request.
  }
}

/**
 * The path of a request below a server whose URL has `pathPrefix`. A path of URL-safe characters (what
 * every caller builds, with encodeURIComponent and URLSearchParams) goes as it is; anything else is
 * normalised as a URL would normalise it (spaces and non-ASCII percent-encoded) rather than refused by
 * node:http.
 */
function requestPath(pathPrefix: string, path: string): string {
  const joined = pathPrefix + path;
  if (/^[\w\-.~!$&'()*+,;=:@%/?]*$/.test(joined)) return joined;
  const url = new URL(`http://host${joined}`);
  return url.pathname + url.search;
}

/** The TLS credentials of a request, as the KubeConfig applied them. */
interface TlsMaterial {
  ca: https.RequestOptions['ca'];
  cert: https.RequestOptions['cert'];
  key: https.RequestOptions['key'];
}

const CREDENTIAL_OPTIONS = ['ca', 'cert', 'key'] as const;

/** Distinct credentials one agent tells apart; a process rotates its credentials a few times a day at most. */
const MAX_TLS_MATERIALS = 16;

/**
 * An HTTPS agent whose connection pools are named by a short key. Node names a pool by concatenating the
 * request's CA, client certificate and key PEMs (several KiB) when a request is added, when its socket is
 * freed and when it is removed: a measurable share of the CPU of every request. Here the name is Node's
 * own, from every option Node names a pool by, except that the credentials are compared by content with
 * those earlier requests carried and named by a number: requests with the same credentials and TLS
 * settings share connections, a rotated certificate gets connections of its own.
 */
export class KubeHttpsAgent extends https.Agent {
  readonly #materials: { material: TlsMaterial; id: number }[] = [];
  #nextId = 0;

  override getName(options: https.RequestOptions = {}): string {
    const { ca, cert, key } = options;
    return `${this.#nameWithoutCredentials(options)}:${this.#materialId({ ca, cert, key })}`;
  }

  /**
   * Node's name for `options` as if they carried no CA, certificate or key. Node calls getName with
   * the null-prototype copies it merges its options into, and copying one of those without three
   * properties costs several microseconds, a few times per request; so the three are set undefined on
   * the object itself for the synchronous call, and put back. An object that refuses the write (frozen)
   * is copied instead.
   */
  #nameWithoutCredentials(options: https.RequestOptions): string {
    const hidden = CREDENTIAL_OPTIONS.filter((name) => options[name] !== undefined);
    if (hidden.length === 0) return super.getName(options);
    if (Object.isFrozen(options)) {
      return super.getName({ ...options, ca: undefined, cert: undefined, key: undefined });
    }
    const saved = hidden.map((name) => options[name]);
    try {
      for (const name of hidden) options[name] = undefined;
      return super.getName(options);
    } finally {
      hidden.forEach((name, i) => {
        options[name] = saved[i] as never;
      });
    }
  }

  #materialId(material: TlsMaterial): number {
    const known = this.#materials.find((entry) => sameMaterial(entry.material, material));
    if (known !== undefined) return known.id;
    if (this.#materials.length >= MAX_TLS_MATERIALS) this.#materials.shift();
    const id = this.#nextId++;
    this.#materials.push({ material, id });
    return id;
  }
}

function sameMaterial(a: TlsMaterial, b: TlsMaterial): boolean {
  return sameValue(a.ca, b.ca) && sameValue(a.cert, b.cert) && sameValue(a.key, b.key);
}

/**
 * Equal PEM contents: strings and Buffers, or arrays of them, as the KubeConfig applies them (new
 * Buffers with every application, see AppliedKubeConfig). Anything else Node's TLS options take (a
 * KeyObject, a key with its passphrase) is the same only when it is the same object.
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  const pem = (value: unknown): Buffer | undefined =>
    typeof value === 'string' ? Buffer.from(value) : Buffer.isBuffer(value) ? value : undefined;
  const [left, right] = [pem(a), pem(b)];
  return left !== undefined && right !== undefined && left.equals(right);
}
