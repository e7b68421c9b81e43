/**
 * `KubeClient`: the one way to the API server. `client.resource(type)` gives the typed handle of a
 * resource ({@link Resource}), through which every object is read and written; `client.fetch(path)`
 * reaches what is not a resource (`/version`, `/readyz`, `/debug/pprof/...`). Both go through one
 * {@link KubeTransport}: one KubeConfig applied per request, one pool of kept-alive connections, one
 * client-side rate limiter, one set of REST metrics, and `KubeApiError` for every failure.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from './object.ts';
import { Resource, type ProtobufCodec } from './resource.ts';
import type { ResourceType } from './resource-type.ts';
import type { KubeTransportOptions, KubeTransportStats } from './kube-request.ts';
import { KubeTransport } from './transport.ts';

/** Init for {@link KubeClient.fetch}: a string body is enough for every non-resource endpoint. */
export interface KubeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface KubeClientOptions extends KubeTransportOptions {
  /**
   * The `fieldManager` of every write unless the call names another: the name under which the API
   * server records the fields this program owns (controller-runtime's `client.WithFieldOwner`).
   */
  fieldManager?: string;
}

/** Statuses whose responses never carry a body: `new Response(body, ...)` rejects them. */
const nullBodyStatuses = new Set([101, 204, 205, 304]);

/** `/api/<version>/<anything>` or `/apis/<group>/<version>/<anything>`: a resource's path. */
const RESOURCE_PATH = /^\/(api\/[^/?]+|apis\/[^/?]+\/[^/?]+)\/[^/?]/;

export class KubeClient {
  readonly kubeConfig: KubeConfig;
  /** The default `fieldManager` of writes, if any. */
  readonly fieldManager: string | undefined;
  readonly #transport: KubeTransport;

  /** `options`: the transport's (rate limit, default 20 qps and burst 30; metrics; user agent; clock) and `fieldManager`. */
  constructor(kubeConfig: KubeConfig, options: KubeClientOptions = {}) {
    const { fieldManager, ...transportOptions } = options;
    this.kubeConfig = kubeConfig;
    this.fieldManager = fieldManager;
    this.#transport = new KubeTransport(kubeConfig, transportOptions);
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
   * The typed handle of one resource: `client.resource<Pod>({ group: '', version: 'v1', plural: 'pods',
   * kind: 'Pod', namespaced: true })`. Cheap: make one where it is needed, or keep one.
   */
  resource<K extends KubeObject>(
    type: ResourceType,
    options: { protobuf?: ProtobufCodec<K> } = {},
  ): Resource<K> {
    return new Resource<K>({ transport: this.#transport, fieldManager: this.fieldManager }, type, options);
  }

  /**
   * A request to an endpoint that is not a resource (`/version`, `/readyz`, `/debug/pprof/profile`),
   * through the same transport. Like `fetch`, resolves with any HTTP status and rejects (with a
   * `KubeApiError`) only when no response arrived. A resource's path is refused: use its handle.
   */
  async fetch(path: string, init: KubeFetchInit = {}): Promise<Response> {
    if (RESOURCE_PATH.test(path)) {
      throw new TypeError(`KubeClient.fetch: ${path} is a resource's path: use client.resource()`);
    }
    const response = await this.#transport.send({ path, ...init });
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const body = nullBodyStatuses.has(response.status) ? null : new Uint8Array(response.body);
    return new Response(body, { status: response.status, headers });
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
}
