import {
  isGone,
  type GroupVersionResource,
  type KubeObject,
  type ListOptions,
  type Resource,
  type WatchEvent,
} from '@loopwright/client';

/** The complete result of a (paginated) list: every item plus the resourceVersion to watch from. */
export interface ListResult<T extends KubeObject> {
  items: T[];
  resourceVersion: string;
}

/** Parameters of one watch request. */
export interface WatchRequest {
  /** Watch from here (exclusive): the list's resourceVersion or the last event's. */
  resourceVersion: string;
  /** Server-side timeout: the API server ends the watch cleanly after this many seconds. */
  timeoutSeconds: number;
  /**
   * Client-side timeout: if nothing at all (not even a bookmark or a partial line) arrives for this
   * long, including while waiting for the response headers, the connection is considered dead and
   * the watch fails with a `timeout` `KubeApiError`.
   */
  inactivityTimeoutMs: number;
  /**
   * A streaming list: the watch first sends the collection's state at `resourceVersion` or newer as
   * ADDED events, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"`.
   */
  sendInitialEvents?: boolean;
  /** Only the objects this `shardSelector` selects (see {@link ResourceClient.list}). */
  shardSelector?: string;
  signal: AbortSignal;
}

/**
 * List and watch for one resource and scope, like client-go's `ListerWatcher`. The reflector depends
 * only on this interface, which is what lets its unit tests script failures without a server.
 *
 * Failure contract: `list` rejects and `watch` throws a `KubeApiError`; when `signal` aborts,
 * `list` rejects (with an `aborted` one) and `watch` simply ends: callers check `signal.aborted`. A
 * `watch` that ends without throwing was closed by the server (its timeout).
 */
export interface ResourceClient<T extends KubeObject> {
  /** `resource.group` for logs and metrics. */
  readonly resource: string;
  /** Group, version and plural, for a log line naming the resource when the server does not serve it. */
  readonly type: GroupVersionResource;
  /**
   * `shardSelector`: only the objects it selects (KEP-5866, server-side sharding; a server without the
   * feature ignores it). The reflector passes the one its informer was re-scoped to.
   */
  list(signal: AbortSignal, shardSelector?: string): Promise<ListResult<T>>;
  watch(request: WatchRequest): AsyncIterable<WatchEvent<T>>;
}

/** Options of {@link createResourceClient}: the scope within the resource, and how to read it. */
export interface ResourceClientOptions {
  /** Watch one namespace; omitted = all namespaces (or a cluster-scoped resource). */
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Page size of the list (`limit`). Default 500 like client-go's pager. */
  pageSize?: number | undefined;
  /** Timeout for each list page, from request to last byte. Default 60 s. */
  listPageTimeoutMs?: number | undefined;
  /**
   * `protobuf`: list and watch in protobuf, each object decoded by the handle's codec
   * (`client.resource(type, { protobuf: { decode } })`, built-in kinds only). The API server then
   * encodes each event once for this watch and every other protobuf watcher of it,
   * kube-controller-manager's included. Default JSON.
   */
  encoding?: 'json' | 'protobuf' | undefined;
}

/**
 * Creates a {@link ResourceClient} on a resource's handle, which fills in list items'
 * `apiVersion`/`kind` (so cached objects look the same whether they came from a list or a watch) and
 * ends a watch quietly when its signal aborts.
 *
 * - `list` pages with `limit` + `continue`; if a continue token expires mid-way (410), it falls back
 *   to one unpaginated list like client-go's pager.
 * - `watch` asks for bookmarks, from the given resourceVersion, with the given server timeout (and for
 *   the initial events of a streaming list when asked), and yields each event as it arrives; an `ERROR`
 *   event is yielded as-is for the caller to classify.
 */
export function createResourceClient<T extends KubeObject>(
  handle: Resource<T>,
  options: ResourceClientOptions = {},
): ResourceClient<T> {
  return new HandleResourceClient<T>(handle, options);
}

class HandleResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly resource: string;
  readonly type: GroupVersionResource;
  readonly #handle: Resource<T>;
  readonly #options: ResourceClientOptions;

  constructor(handle: Resource<T>, options: ResourceClientOptions) {
    this.#handle = handle;
    this.#options = options;
    this.resource = handle.name;
    this.type = { group: handle.type.group, version: handle.type.version, plural: handle.type.plural };
  }

  async list(signal: AbortSignal, shardSelector?: string): Promise<ListResult<T>> {
    try {
      return await this.#listPaged(signal, this.#options.pageSize ?? 500, shardSelector);
    } catch (error) {
      if (isGone(error) && !signal.aborted) {
        // An expired continue token: the pages seen so far are from a snapshot that no longer exists.
        return await this.#listPaged(signal, undefined, shardSelector);
      }
      throw error;
    }
  }

  async #listPaged(
    signal: AbortSignal,
    pageSize: number | undefined,
    shardSelector: string | undefined,
  ): Promise<ListResult<T>> {
    const items: T[] = [];
    let continueToken: string | undefined;
    for (;;) {
      const page = await this.#handle.list({
        ...this.#scope(),
        ...(shardSelector === undefined ? {} : { shardSelector }),
        limit: pageSize,
        continue: continueToken,
        signal,
        timeoutMs: this.#options.listPageTimeoutMs ?? 60_000,
      });
      for (const item of page.items) items.push(item);
      continueToken = page.continue;
      if (continueToken === '') return { items, resourceVersion: page.resourceVersion };
    }
  }

  watch(request: WatchRequest): AsyncIterable<WatchEvent<T>> {
    return this.#handle.watch({
      ...this.#scope(),
      signal: request.signal,
      resourceVersion: request.resourceVersion,
      timeoutSeconds: request.timeoutSeconds,
      idleTimeoutMs: request.inactivityTimeoutMs,
      ...(request.sendInitialEvents === true ? { sendInitialEvents: true } : {}),
      ...(request.shardSelector === undefined ? {} : { shardSelector: request.shardSelector }),
    });
  }

  /** The namespace, selectors and encoding of every list and watch request (the handle skips an undefined one). */
  #scope(): Pick<ListOptions, 'namespace' | 'labelSelector' | 'fieldSelector' | 'encoding'> {
    const { namespace, labelSelector, fieldSelector, encoding } = this.#options;
    return { namespace, labelSelector, fieldSelector, encoding };
  }
}
