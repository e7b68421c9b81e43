/**
 * `KubeClient`: one KubeConfig, one connection pool, one client-side rate limiter and one set of REST
 * metrics for every request a controller makes, through generated API clients (`client.api(CoreV1Api)`)
 * or raw requests (`client.fetch(path, init)`).
 *
 * How it plugs into @kubernetes/client-node 2.x: generated APIs take a `Configuration` whose `httpApi`
 * sends each fully built `RequestContext` (URL, headers, body, TLS dispatcher). We pass our own
 * `httpApi` that waits for a limiter token, sends through client-node's default undici library, and
 * reports the outcome; and our own auth method that applies the KubeConfig's credentials per request
 * (so rotated service-account tokens and exec plugins keep working) but reuses one TLS dispatcher.
 * client-node 2.0.1's `makeApiClient` builds a new undici Agent for every request, i.e. a new TCP+TLS
 * connection per call; reusing one keeps connections alive as client-go does.
 */
import {
  IsomorphicFetchHttpLibrary,
  RequestContext,
  ServerConfiguration,
  createConfiguration,
  wrapHttpLibrary,
  type Configuration,
  type HttpMethod,
  type KubeConfig,
  type ResponseContext,
  type SecurityAuthentication,
} from '@kubernetes/client-node';
import { KubeApiError, toKubeApiError } from '../errors/kube-api-error.ts';
import { realClock, type Clock } from './clock.ts';
import { TokenBucket } from './token-bucket.ts';

/** One finished request, in the shape `@loopwright/metrics`' `restClient.observeRequest` takes. */
export interface RestRequestObservation {
  /** HTTP method as sent (`GET`, `PATCH`...): the `method` and `verb` labels. */
  method: string;
  /** `host[:port]` of the API server: never a path, so label cardinality stays bounded. */
  host: string;
  /** HTTP status; undefined when no response arrived (network error, abort): client-go's `<error>`. */
  statusCode: number | undefined;
  /** From handing the request to the network until the response headers (or the failure); excludes the limiter wait. */
  durationSeconds: number;
}

/** How long one request waited for a client-side rate-limiter token (client-go's `rest_client_rate_limiter_duration_seconds`). */
export interface RateLimiterWaitObservation {
  method: string;
  host: string;
  durationSeconds: number;
}

/**
 * Receives request outcomes. Structural, so `metrics.restClient` from `@loopwright/metrics` plugs in
 * directly and benchmarks can pass a plain object.
 */
export interface RestClientObserver {
  observeRequest(request: RestRequestObservation): void;
  observeRateLimiterWait?(wait: RateLimiterWaitObservation): void;
}

export interface KubeClientOptions {
  /**
   * Client-side rate limit, client-go's `rest.Config.QPS`/`Burst`. Default 20 qps, burst 30 (the
   * client-go defaults since 1.27 for controller-runtime managers). `false` disables the limiter.
   */
  rateLimit?: { qps: number; burst: number } | false;
  metrics?: RestClientObserver;
  /** Sent as `User-Agent` unless a request sets its own. Default `loopwright`. */
  userAgent?: string;
  clock?: Clock;
}

/** Totals since the client was created, for benchmarks and tests. */
export interface KubeClientStats {
  /** Requests sent (including failed ones). */
  requests: number;
  /** Requests that had to wait for a rate-limiter token. */
  throttledRequests: number;
  /** Sum of all rate-limiter waits, in seconds. */
  rateLimiterWaitSeconds: number;
}

/** Init for {@link KubeClient.fetch}: a string body is enough for every Kubernetes verb. */
export interface KubeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

type ApiConstructor<T> = new (configuration: Configuration) => T;
type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/** Statuses whose responses never carry a body: `new Response(stream, ...)` rejects them. */
const nullBodyStatuses = new Set([101, 204, 205, 304]);

export class KubeClient {
  readonly kubeConfig: KubeConfig;
  /** The API server's base URL, without a trailing slash. */
  readonly server: string;
  /** `host[:port]` of the API server: the metrics' `host` label. */
  readonly host: string;
  readonly #limiter: TokenBucket | undefined;
  readonly #metrics: RestClientObserver | undefined;
  readonly #userAgent: string;
  readonly #configuration: Configuration;
  readonly #library = new IsomorphicFetchHttpLibrary();
  #dispatcher: Dispatcher | undefined;
  #stats: KubeClientStats = { requests: 0, throttledRequests: 0, rateLimiterWaitSeconds: 0 };

  constructor(kubeConfig: KubeConfig, options: KubeClientOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster?.server) throw new Error('KubeClient: the KubeConfig has no current cluster with a server');
    this.kubeConfig = kubeConfig;
    this.server = cluster.server.replace(/\/+$/, '');
    this.host = new URL(this.server).host;
    const rateLimit = options.rateLimit ?? { qps: 20, burst: 30 };
    this.#limiter =
      rateLimit === false ? undefined : new TokenBucket({ ...rateLimit, clock: options.clock ?? realClock });
    this.#metrics = options.metrics;
    this.#userAgent = options.userAgent ?? 'loopwright';
    const auth: SecurityAuthentication = {
      getName: () => 'loopwright kubeconfig',
      applySecurityAuthentication: (context) => this.#authenticate(context),
    };
    this.#configuration = createConfiguration({
      baseServer: new ServerConfiguration<Record<string, string>>(this.server, {}),
      authMethods: { default: auth },
      httpApi: wrapHttpLibrary({ send: (context) => this.#send(context) }),
    });
  }

  /**
   * A generated API client (`client.api(CoreV1Api)`) whose requests all go through this client's
   * limiter, metrics and connection pool. Rejections are {@link KubeApiError}s (the client-node
   * `ApiException` is their `cause`), so messages are readable and `isNotFound(e)` & co. work.
   */
  api<T extends object>(apiType: ApiConstructor<T>): T {
    const api = new apiType(this.#configuration);
    return new Proxy(api, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]): unknown => {
          const result: unknown = Reflect.apply(value as (...a: unknown[]) => unknown, target, args);
          return result instanceof Promise
            ? result.catch((error: unknown) => {
                throw toKubeApiError(error) ?? error;
              })
            : result;
        };
      },
    });
  }

  /**
   * A raw request to `path` (e.g. `/apis/apps/v1/namespaces/x/deployments/y?fieldManager=z`) with the
   * KubeConfig's credentials and TLS, through the same limiter and metrics. Like `fetch`, resolves with
   * any HTTP status (use `KubeApiError.fromResponse` for errors) and rejects on network failure. The
   * body is a stream: watches work.
   */
  async fetch(path: string, init: KubeFetchInit = {}): Promise<Response> {
    if (!path.startsWith('/'))
      throw new TypeError(`KubeClient.fetch: path must start with "/", got "${path}"`);
    const context = new RequestContext(
      `${this.server}${path}`,
      (init.method ?? 'GET').toUpperCase() as HttpMethod,
    );
    for (const [name, value] of Object.entries(init.headers ?? {})) context.setHeaderParam(name, value);
    if (init.body !== undefined) context.setBody(init.body);
    if (init.signal) context.setSignal(init.signal);
    await this.#authenticate(context);
    const response = await this.#send(context);
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) headers.set(name, value);
    const body = nullBodyStatuses.has(response.httpStatusCode) ? null : response.body.stream();
    return new Response(body, { status: response.httpStatusCode, headers });
  }

  /**
   * A JSON request: sends `body` (serialised) with `contentType`, parses the JSON response, and throws
   * {@link KubeApiError} for any non-2xx status.
   */
  async requestJson<T>(
    method: string,
    path: string,
    options: { body?: unknown; contentType?: string; signal?: AbortSignal } = {},
  ): Promise<T> {
    const init: KubeFetchInit = { method, headers: { Accept: 'application/json' } };
    if (options.body !== undefined) {
      init.body = JSON.stringify(options.body);
      (init.headers as Record<string, string>)['Content-Type'] = options.contentType ?? 'application/json';
    }
    if (options.signal) init.signal = options.signal;
    const response = await this.fetch(path, init);
    if (!response.ok) throw await KubeApiError.fromResponse(response, `${method.toUpperCase()} ${path}`);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Request totals so far (a copy). */
  stats(): KubeClientStats {
    return { ...this.#stats };
  }

  /** Closes the pooled connections. Requests after `close()` open new ones. */
  async close(): Promise<void> {
    const dispatcher = this.#dispatcher;
    this.#dispatcher = undefined;
    await dispatcher?.close();
  }

  /**
   * Applies credentials per request (tokens can rotate), then swaps client-node's per-request dispatcher
   * for the pooled one. The first dispatcher client-node builds (from the KubeConfig's CA, client
   * certificate, TLS server name, proxy) is kept; so a rotated client certificate file needs a new client.
   */
  async #authenticate(context: RequestContext): Promise<void> {
    await this.kubeConfig.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (fresh === undefined) return;
    if (this.#dispatcher === undefined) {
      this.#dispatcher = fresh;
    } else {
      context.setDispatcher(this.#dispatcher);
      void fresh.close().catch(() => undefined);
    }
  }

  async #send(context: RequestContext): Promise<ResponseContext> {
    const method = context.getHttpMethod();
    const host = this.host;
    if (!Object.keys(context.getHeaders()).some((name) => name.toLowerCase() === 'user-agent')) {
      context.setHeaderParam('User-Agent', this.#userAgent);
    }
    if (this.#limiter) {
      const waitedMs = await this.#limiter.wait(context.getSignal());
      if (waitedMs > 0) {
        this.#stats.throttledRequests += 1;
        this.#stats.rateLimiterWaitSeconds += waitedMs / 1000;
      }
      this.#metrics?.observeRateLimiterWait?.({ method, host, durationSeconds: waitedMs / 1000 });
    }
    this.#stats.requests += 1;
    const started = performance.now();
    let statusCode: number | undefined;
    try {
      const response = await this.#library.send(context).toPromise();
      statusCode = response.httpStatusCode;
      return response;
    } finally {
      this.#metrics?.observeRequest({
        method,
        host,
        statusCode,
        durationSeconds: (performance.now() - started) / 1000,
      });
    }
  }
}
