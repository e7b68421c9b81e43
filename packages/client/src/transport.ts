/**
 * `KubeTransport`: the one way Loopwright talks to the API server. Every request goes through one: the
 * calls of every resource handle (informers' lists and watches, Lease renewals, reconciles' writes)
 * and `KubeClient.fetch`.
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
 *
 * The pieces it composes: the request types (`kube-request.ts`), one request's life (`exchange.ts`:
 * deadline, idle timer, abort, the error that ended it), reading responses (`response.ts`), the
 * server's Retry-After (`retry-after.ts`), the watch stream (`watch-stream.ts`), the HTTPS agent
 * (`https-agent.ts`) and the `background` priority's wait for quiet (`background-priority.ts`).
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { realClock, sleep, type Clock } from '@loopwright/core';
import { KubeApiError, type KubeRequestLine } from './api-error.ts';
import { AppliedKubeConfig } from './applied-config.ts';
import { BackgroundScheduler } from './background-priority.ts';
import { Exchange } from './exchange.ts';
import { KubeHttpsAgent } from './https-agent.ts';
import type {
  KubeRequest,
  KubeResponse,
  KubeTransportOptions,
  KubeTransportStats,
  KubeWatchRequest,
  RestClientObserver,
  RestRequestObservation,
} from './kube-request.ts';
import { PROTOBUF_MEDIA_TYPE } from './protobuf.ts';
import { errorOf, MAX_ERROR_BODY_BYTES, readBody } from './response.ts';
import { MAX_RETRIES, serverRetryAfterMs } from './retry-after.ts';
import { TokenBucket, type RequestPriority } from './token-bucket.ts';
import { watchDocuments } from './watch-stream.ts';

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
  readonly #background: BackgroundScheduler;

  constructor(kubeConfig: KubeConfig, options: KubeTransportOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster?.server)
      throw new Error('KubeTransport: the KubeConfig has no current cluster with a server');
    this.kubeConfig = kubeConfig;
    this.server = cluster.server.replace(/\/+$/, '');
    const url = new URL(cluster.server);
    this.host = url.host;
    this.#target = {
      protocol: url.protocol,
      // An IPv6 literal is bracketed in a URL, not in a socket address (as Node's urlToHttpOptions).
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port,
      pathPrefix: url.pathname.replace(/\/+$/, ''),
    };
    this.#clock = options.clock ?? realClock;
    this.#background = new BackgroundScheduler(this.#clock);
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
   * ends when the server ends the response (with `protobuf`, each frame's bytes; with `text`, the text as it arrives). Throws a {@link KubeApiError} for an error status, a
   * connection that fails or stays silent beyond `idleTimeoutMs`, an abort, a line that is not JSON,
   * or a stream cut in the middle of a line. Stopping the iteration early closes the connection.
   */
  async *watch(request: KubeWatchRequest): AsyncGenerator<unknown, void, undefined> {
    // No rate-limiter token, as client-go's Request.Watch: a watch is one long request, and an
    // informer's re-watch must not queue behind reconciles' writes.
    const format = request.protobuf === true ? 'protobuf' : request.text === true ? 'text' : 'json';
    const accept = { protobuf: PROTOBUF_MEDIA_TYPE, text: '*/*', json: undefined }[format];
    const { exchange, response } = await this.#open(
      accept === undefined ? request : { ...request, headers: { ...request.headers, Accept: accept } },
      { idleTimeoutMs: request.idleTimeoutMs, anyStatus: false, rateLimited: false },
    );
    try {
      yield* watchDocuments(response, format, exchange);
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
    const exchange = new Exchange(this.#clock, { method, path: path.replace(/\?.*/, '') }, request);
    const priority = request.priority ?? 'normal';
    if (priority !== 'background') this.#background.busied();
    try {
      if (priority === 'background') await this.#background.whenQuiet(exchange.signal);
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
      if (priority !== 'background') this.#background.settled();
    }
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

function requestLine(server: string, request: KubeRequest): KubeRequestLine {
  return { method: (request.method ?? 'GET').toUpperCase(), path: new URL(server + request.path).pathname };
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
