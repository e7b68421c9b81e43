/**
 * `KubeClient`: the reconcilers' way to the API server, through generated API clients
 * (`client.api(CoreV1Api)`) or JSON requests (`client.requestJson(method, path)`). Both go through one
 * `@loopwright/core` {@link KubeTransport}: one KubeConfig applied per request, one pool of kept-alive
 * connections, one client-side rate limiter, one set of REST metrics, and `KubeApiError` for
 * every failure.
 *
 * How it plugs into @kubernetes/client-node 2.x: generated APIs take a `Configuration` whose `httpApi`
 * sends each fully built `RequestContext` (URL, headers, body). Ours sends it through the transport and
 * no auth method is configured, since the transport applies the KubeConfig's credentials itself. An
 * error status rejects with the transport's `KubeApiError` before client-node would build its
 * `ApiException` (whose `body` is raw text and whose message dumps headers).
 */
import {
  ResponseContext,
  SelfDecodingBody,
  ServerConfiguration,
  createConfiguration,
  wrapHttpLibrary,
  type Configuration,
  type KubeConfig,
  type RequestContext,
} from '@kubernetes/client-node';
import {
  KubeTransport,
  PROTOBUF_MEDIA_TYPE,
  type KubeTransportOptions,
  type KubeTransportStats,
  type RequestPriority,
} from '@loopwright/core';

type ApiConstructor<T> = new (configuration: Configuration) => T;

/** Init for {@link KubeClient.fetch}: a string body is enough for every Kubernetes verb. */
export interface KubeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/**
 * An `accept` for a write of which only the answer's metadata matters (its name, uid, resourceVersion):
 * the API server answers with the object's `PartialObjectMetadata`, so it encodes, and the client parses,
 * a fraction of the object. An error still comes as a JSON `Status`, the second choice.
 */
export const ACCEPT_METADATA_ONLY =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/**
 * The `Accept` of {@link KubeClient.writeProtobuf}: the answer is not read, so the cheapest one for the
 * API server to encode, the object's `PartialObjectMetadata` in protobuf. An error's `Status` comes as
 * JSON, the second choice, as with {@link ACCEPT_METADATA_ONLY}.
 */
const ACCEPT_PROTOBUF_METADATA_ONLY = `${PROTOBUF_MEDIA_TYPE};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json`;

/** Statuses whose responses never carry a body: `new Response(body, ...)` rejects them. */
const nullBodyStatuses = new Set([101, 204, 205, 304]);

export class KubeClient {
  readonly kubeConfig: KubeConfig;
  readonly #transport: KubeTransport;
  readonly #configuration: Configuration;

  /** `options` are the transport's: rate limit (default 20 qps, burst 30), metrics observer, user agent, clock. */
  constructor(kubeConfig: KubeConfig, options: KubeTransportOptions = {}) {
    this.kubeConfig = kubeConfig;
    this.#transport = new KubeTransport(kubeConfig, options);
    this.#configuration = createConfiguration({
      baseServer: new ServerConfiguration<Record<string, string>>(this.#transport.server, {}),
      httpApi: wrapHttpLibrary({ send: (context) => this.#send(context) }),
    });
  }

  /** The API server's base URL, without a trailing slash. */
  get server(): string {
    return this.#transport.server;
  }

  /** `host[:port]` of the API server: the metrics' `host` label. */
  get host(): string {
    return this.#transport.host;
  }

  /**
   * A generated API client (`client.api(CoreV1Api)`) whose requests all go through this client's
   * transport. Rejections are `KubeApiError`s, so messages are readable and `isNotFound(e)` &
   * co. work.
   */
  api<T extends object>(apiType: ApiConstructor<T>): T {
    return new apiType(this.#configuration);
  }

  /**
   * A raw request to `path` (e.g. `/apis/apps/v1/namespaces/x/deployments/y?fieldManager=z`) through
   * the same transport. Like `fetch`, resolves with any HTTP status and rejects (with a `KubeApiError`)
   * only when no response arrived; the body is read in full first, so it is no way to watch.
   */
  async fetch(path: string, init: KubeFetchInit = {}): Promise<Response> {
    const response = await this.#transport.send({ path, ...init });
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const body = nullBodyStatuses.has(response.status) ? null : new Uint8Array(response.body);
    return new Response(body, { status: response.status, headers });
  }

  /**
   * A JSON request: sends `body` (serialised) with `contentType`, parses the JSON response, and throws
   * `KubeApiError` for any non-2xx status and any failure. `priority` orders it among requests waiting
   * for a rate-limiter token (`critical` for the write that completes a recorded claim, `background`
   * for diagnostics). `accept`: the `Accept` header, default `application/json` (see
   * {@link ACCEPT_METADATA_ONLY}).
   */
  async requestJson<T>(
    method: string,
    path: string,
    options: {
      body?: unknown;
      contentType?: string;
      accept?: string;
      signal?: AbortSignal;
      priority?: RequestPriority;
    } = {},
  ): Promise<T> {
    const { accept, ...rest } = options;
    return this.#transport.requestJson<T>({
      method,
      path,
      ...rest,
      ...(accept === undefined ? {} : { headers: { Accept: accept } }),
    });
  }

  /**
   * A write whose body is protobuf (`body` from `encodeObject`, for built-in kinds), such as a create,
   * of which only success matters: resolves once the API server accepted it, without reading its
   * answer, and rejects with `KubeApiError` for any non-2xx status and any failure, as
   * {@link requestJson}. The API server decodes a protobuf object more cheaply than JSON (a pod create
   * costs it about a tenth less), which counts when a controller writes at its limit.
   */
  async writeProtobuf(
    method: string,
    path: string,
    body: Uint8Array,
    options: { signal?: AbortSignal; priority?: RequestPriority } = {},
  ): Promise<void> {
    await this.#transport.request({
      method,
      path,
      body,
      headers: { 'Content-Type': PROTOBUF_MEDIA_TYPE, Accept: ACCEPT_PROTOBUF_METADATA_ONLY },
      ...options,
    });
  }

  /** Request totals so far (a copy). */
  stats(): KubeTransportStats {
    return this.#transport.stats();
  }

  /**
   * Closes the kept-alive connections. Requests after `close()` open new ones. Returns a promise, like
   * every other resource a manager or a test shuts down, so they can all be awaited alike.
   */
  close(): Promise<void> {
    this.#transport.close();
    return Promise.resolve();
  }

  async #send(context: RequestContext): Promise<ResponseContext> {
    const url = context.getUrl();
    if (!url.startsWith(this.#transport.server)) {
      throw new TypeError(`KubeClient: ${url} is not below the API server ${this.#transport.server}`);
    }
    const body = context.getBody();
    if (body !== undefined && typeof body !== 'string') {
      // Generated Kubernetes APIs only ever send JSON text.
      throw new TypeError('KubeClient: only string request bodies are supported');
    }
    const signal = context.getSignal();
    const response = await this.#transport.request({
      method: context.getHttpMethod(),
      path: url.slice(this.#transport.server.length),
      headers: context.getHeaders(),
      ...(body === undefined ? {} : { body }),
      ...(signal === undefined ? {} : { signal }),
    });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return new ResponseContext(
      response.status,
      headers,
      new SelfDecodingBody(Promise.resolve(response.body)),
    );
  }
}
