import {
  isGone,
  KubeApiError,
  PROTOBUF_MEDIA_TYPE,
  type KubeRequest,
  type KubeTransport,
} from '@loopwright/client';
import { decodeListPage, decodeWatchEvent, type ProtobufDecoder, type ListPage } from '@loopwright/client';
import {
  itemKindOf,
  resourceName,
  type KubeObject,
  type ListWatchScope,
  type ResourceRef,
  type WatchEvent,
} from './types.ts';

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
  readonly ref: ResourceRef;
  list(signal: AbortSignal): Promise<ListResult<T>>;
  watch(request: WatchRequest): AsyncIterable<WatchEvent<T>>;
}

/** Options of {@link createResourceClient}. */
export interface HttpResourceClientOptions<T extends KubeObject = KubeObject> extends ListWatchScope {
  /** The API server connection: credentials, rate limit, request metrics. */
  transport: KubeTransport;
  /** Page size of the list (`limit`). Default 500 like client-go's pager. */
  pageSize?: number;
  /** Timeout for each list page, from request to last byte. Default 60 s. */
  listPageTimeoutMs?: number;
  /**
   * List and watch in protobuf, each object decoded by this function (see {@link ProtobufDecoder}):
   * the API server then encodes each event of a built-in kind once for this watch and every other
   * protobuf watcher of it, kube-controller-manager's included. Default: JSON.
   */
  protobuf?: ProtobufDecoder<T> | undefined;
}

/**
 * Creates a {@link ResourceClient} on a {@link KubeTransport}.
 *
 * - `list` pages with `limit` + `continue`; if a continue token expires mid-way (410), it falls back
 *   to one unpaginated list like client-go's pager. List items get `apiVersion`/`kind` filled in
 *   (the API server omits them in lists) so cached objects look the same whether they came from a
 *   list or a watch.
 * - `watch` sends `watch=1&allowWatchBookmarks=true&resourceVersion=..&timeoutSeconds=..` and yields
 *   each event as it arrives; an `ERROR` event is yielded as-is for the caller to classify.
 */
export function createResourceClient<T extends KubeObject>(
  options: HttpResourceClientOptions<T>,
): ResourceClient<T> {
  return new HttpResourceClient<T>(options);
}

class HttpResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly resource: string;
  readonly ref: ResourceRef;
  readonly #options: HttpResourceClientOptions<T>;
  readonly #path: string;

  constructor(options: HttpResourceClientOptions<T>) {
    this.#options = options;
    this.resource = resourceName(options);
    this.ref = { group: options.group, version: options.version, plural: options.plural };
    const prefix =
      options.group === '' ? `/api/${options.version}` : `/apis/${options.group}/${options.version}`;
    const namespace =
      options.namespace === undefined ? '' : `/namespaces/${encodeURIComponent(options.namespace)}`;
    this.#path = `${prefix}${namespace}/${options.plural}`;
  }

  async list(signal: AbortSignal): Promise<ListResult<T>> {
    try {
      return await this.#listPaged(signal, this.#options.pageSize ?? 500);
    } catch (error) {
      if (isGone(error) && !signal.aborted) {
        // An expired continue token: the pages seen so far are from a snapshot that no longer exists.
        return await this.#listPaged(signal, undefined);
      }
      throw error;
    }
  }

  async #listPaged(signal: AbortSignal, pageSize: number | undefined): Promise<ListResult<T>> {
    const items: T[] = [];
    let continueToken: string | undefined;
    for (;;) {
      const query = this.#selectorQuery();
      if (pageSize !== undefined) query.set('limit', String(pageSize));
      if (continueToken !== undefined) query.set('continue', continueToken);
      const request = {
        path: this.#pathWith(query),
        signal,
        timeoutMs: this.#options.listPageTimeoutMs ?? 60_000,
      };
      const page = await (this.#options.protobuf === undefined
        ? this.#jsonPage(request)
        : this.#protobufPage(request, this.#options.protobuf));
      for (const item of page.items) items.push(item);
      continueToken = page.continue;
      if (continueToken === '') return { items, resourceVersion: page.resourceVersion };
    }
  }

  async #jsonPage(request: KubeRequest): Promise<ListPage<T>> {
    const page = await this.#options.transport.requestJson<ListBody<T>>(request);
    const kind = itemKindOf(page.kind);
    const items = page.items ?? [];
    for (const item of items) {
      if (item.kind === undefined && kind !== undefined) {
        item.apiVersion = page.apiVersion;
        item.kind = kind;
      }
    }
    return {
      items,
      resourceVersion: page.metadata?.resourceVersion ?? '',
      continue: page.metadata?.continue ?? '',
    };
  }

  async #protobufPage(request: KubeRequest, decode: ProtobufDecoder<T>): Promise<ListPage<T>> {
    const transport = this.#options.transport;
    const response = await transport.request({ ...request, headers: { Accept: PROTOBUF_MEDIA_TYPE } });
    try {
      return decodeListPage(response.body, decode);
    } catch (error) {
      throw KubeApiError.undecodable(response.status, error, { method: 'GET', path: this.#path });
    }
  }

  async *watch(request: WatchRequest): AsyncGenerator<WatchEvent<T>> {
    const query = this.#selectorQuery();
    query.set('watch', '1');
    query.set('allowWatchBookmarks', 'true');
    query.set('resourceVersion', request.resourceVersion);
    query.set('timeoutSeconds', String(request.timeoutSeconds));
    try {
      const decode = this.#options.protobuf;
      const events = this.#options.transport.watch({
        path: this.#pathWith(query),
        signal: request.signal,
        idleTimeoutMs: request.inactivityTimeoutMs,
        protobuf: decode !== undefined,
      });
      if (decode === undefined) {
        // Each document is a watch event: the API server's wire format, checked by the reflector.
        yield* events as AsyncIterable<WatchEvent<T>>;
        return;
      }
      for await (const frame of events as AsyncIterable<Buffer>) {
        let event: WatchEvent<T>;
        try {
          event = decodeWatchEvent(frame, decode);
        } catch (error) {
          throw KubeApiError.undecodable(200, error, { method: 'GET', path: this.#path });
        }
        yield event;
      }
    } catch (error) {
      if (request.signal.aborted) return;
      throw error;
    }
  }

  #selectorQuery(): URLSearchParams {
    const query = new URLSearchParams();
    if (this.#options.labelSelector !== undefined) query.set('labelSelector', this.#options.labelSelector);
    if (this.#options.fieldSelector !== undefined) query.set('fieldSelector', this.#options.fieldSelector);
    return query;
  }

  #pathWith(query: URLSearchParams): string {
    const search = query.toString();
    return search === '' ? this.#path : `${this.#path}?${search}`;
  }
}

interface ListBody<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}
