import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { FailureReason, ListWatchError, toListWatchError } from './errors.ts';
import { LineDecoder } from './line-decoder.ts';
import {
  resourceName,
  type ApiRequestObserver,
  type ApiStatus,
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
   * the watch fails with reason `inactivity`.
   */
  inactivityTimeoutMs: number;
  signal: AbortSignal;
}

/**
 * List and watch for one resource and scope. The reflector depends only on this interface, which is
 * what lets its unit tests script failures without a server.
 *
 * Failure contract: `list` rejects and `watch` throws a {@link ListWatchError}; when `signal` aborts,
 * `list` rejects with whatever the abort produced and `watch` simply ends: callers check
 * `signal.aborted`. A `watch` that ends without throwing was closed by the server (its timeout).
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
export interface HttpResourceClientOptions extends ListWatchScope {
  /** Server, TLS and credentials; re-applied per request so rotating tokens (exec plugins) work. */
  kc: KubeConfig;
  /** Page size of the list (`limit`). Default 500 like client-go's pager. */
  pageSize?: number;
  /** Timeout for each list page, from request to last byte. Default 60 s. */
  listPageTimeoutMs?: number;
  /** Timers for the inactivity and page timeouts. Default the system clock. */
  clock?: Clock;
  /** Sees every request (e.g. for `rest_client_*` metrics). */
  observeRequest?: ApiRequestObserver;
}

/** Largest error body read into memory; Status objects are tiny, anything bigger is not a Status. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Creates a {@link ResourceClient} that talks to the API server over node:http(s), with the
 * kubeconfig's TLS settings and credentials (`kc.applyToHTTPSOptions`).
 *
 * - `list` pages with `limit` + `continue`; if a continue token expires mid-way (410), it falls back
 *   to one unpaginated list like client-go's pager. List items get `apiVersion`/`kind` filled in
 *   (the API server omits them in lists) so cached objects look the same whether they came from a
 *   list or a watch.
 * - `watch` sends `watch=1&allowWatchBookmarks=true&resourceVersion=..&timeoutSeconds=..` and decodes
 *   newline-delimited JSON incrementally; an `ERROR` event is yielded as-is for the caller to classify.
 */
export function createResourceClient<T extends KubeObject>(
  options: HttpResourceClientOptions,
): ResourceClient<T> {
  return new HttpResourceClient<T>(options);
}

class HttpResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly resource: string;
  readonly ref: ResourceRef;
  readonly #options: HttpResourceClientOptions;
  readonly #clock: Clock;
  readonly #path: string;

  constructor(options: HttpResourceClientOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
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
      if (error instanceof ListWatchError && error.reason === FailureReason.Gone && !signal.aborted) {
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
      const page = (await this.#getJson(query, signal)) as ListBody<T>;
      const kind = page.kind?.endsWith('List') === true ? page.kind.slice(0, -'List'.length) : undefined;
      for (const item of page.items ?? []) {
        if (item.kind === undefined && kind !== undefined) {
          item.apiVersion = page.apiVersion;
          item.kind = kind;
        }
        items.push(item);
      }
      continueToken = page.metadata?.continue;
      if (continueToken === undefined || continueToken === '') {
        return { items, resourceVersion: page.metadata?.resourceVersion ?? '' };
      }
    }
  }

  async *watch(request: WatchRequest): AsyncGenerator<WatchEvent<T>> {
    const query = this.#selectorQuery();
    query.set('watch', '1');
    query.set('allowWatchBookmarks', 'true');
    query.set('resourceVersion', request.resourceVersion);
    query.set('timeoutSeconds', String(request.timeoutSeconds));

    const exchange = new Exchange(request.signal);
    let timer: TimerHandle | undefined;
    const inactivity = new ListWatchError(
      `watch received nothing for ${request.inactivityTimeoutMs} ms; connection considered dead`,
      { reason: FailureReason.Inactivity },
    );
    const armInactivityTimer = (): void => {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      timer = this.#clock.setTimeout(() => {
        exchange.destroy(inactivity);
      }, request.inactivityTimeoutMs);
    };
    try {
      armInactivityTimer();
      const response = await this.#send(query, exchange);
      if (response.statusCode !== 200) {
        throw await errorFromResponse(response);
      }
      response.setEncoding('utf8');
      const decoder = new LineDecoder();
      for await (const chunk of response as AsyncIterable<string>) {
        armInactivityTimer();
        for (const line of decoder.push(chunk)) {
          if (line.trim() !== '') yield JSON.parse(line) as WatchEvent<T>;
        }
      }
      const rest = decoder.end();
      if (rest.trim() !== '' && !request.signal.aborted) {
        throw new ListWatchError('watch stream ended in the middle of an event', {
          reason: FailureReason.Network,
        });
      }
    } catch (error) {
      if (request.signal.aborted) return;
      throw toListWatchError(error);
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      // Also runs when the consumer stops iterating early (e.g. on an ERROR event): free the socket.
      exchange.destroy(undefined);
    }
  }

  #selectorQuery(): URLSearchParams {
    const query = new URLSearchParams();
    if (this.#options.labelSelector !== undefined) query.set('labelSelector', this.#options.labelSelector);
    if (this.#options.fieldSelector !== undefined) query.set('fieldSelector', this.#options.fieldSelector);
    return query;
  }

  async #getJson(query: URLSearchParams, signal: AbortSignal): Promise<unknown> {
    const exchange = new Exchange(signal);
    const timeoutMs = this.#options.listPageTimeoutMs ?? 60_000;
    const timer = this.#clock.setTimeout(() => {
      exchange.destroy(
        new ListWatchError(`list page did not complete within ${timeoutMs} ms`, {
          reason: FailureReason.Timeout,
        }),
      );
    }, timeoutMs);
    try {
      const response = await this.#send(query, exchange);
      if (response.statusCode !== 200) throw await errorFromResponse(response);
      const body = await readBody(response, Infinity);
      return JSON.parse(body.toString('utf8'));
    } catch (error) {
      throw toListWatchError(error);
    } finally {
      this.#clock.clearTimeout(timer);
      exchange.destroy(undefined);
    }
  }

  async #send(query: URLSearchParams, exchange: Exchange): Promise<http.IncomingMessage> {
    const cluster = this.#options.kc.getCurrentCluster();
    if (cluster === null) {
      throw new ListWatchError('kubeconfig has no current cluster', { reason: FailureReason.Internal });
    }
    const url = new URL(cluster.server);
    url.pathname = url.pathname.replace(/\/$/, '') + this.#path;
    url.search = query.toString();
    const options: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
    await this.#options.kc.applyToHTTPSOptions(options);
    const observe = this.#options.observeRequest;
    if (observe === undefined) return exchange.send(url, options);
    const started = performance.now();
    const report = (statusCode: number | undefined): void => {
      try {
        observe({ method: 'GET', url, statusCode, durationSeconds: (performance.now() - started) / 1000 });
      } catch {
        // An observer is for metrics; it must never break a list or watch.
      }
    };
    try {
      const response = await exchange.send(url, options);
      report(response.statusCode);
      return response;
    } catch (error) {
      report(undefined);
      throw error;
    }
  }
}

interface ListBody<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

/**
 * One HTTP request/response pair that can be torn down from outside (abort signal, timers) with a
 * specific error, whichever phase it is in.
 */
class Exchange {
  readonly #signal: AbortSignal;
  #request: http.ClientRequest | undefined;
  #response: http.IncomingMessage | undefined;
  #destroyedWith: Error | undefined;
  #destroyed = false;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
  }

  send(url: URL, options: https.RequestOptions): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      if (this.#destroyed) {
        reject(this.#destroyedWith ?? new Error('request cancelled'));
        return;
      }
      const transport = url.protocol === 'http:' ? http : https;
      const request = transport.request(url, { ...options, signal: this.#signal }, (response) => {
        this.#response = response;
        resolve(response);
      });
      this.#request = request;
      request.on('error', reject);
      request.end();
    });
  }

  destroy(error: Error | undefined): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#destroyedWith = error;
    if (this.#response !== undefined) this.#response.destroy(error);
    this.#request?.destroy(error);
  }
}

async function readBody(response: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function errorFromResponse(response: http.IncomingMessage): Promise<ListWatchError> {
  const statusCode = response.statusCode ?? 0;
  let status: ApiStatus | undefined;
  try {
    const parsed = JSON.parse((await readBody(response, MAX_ERROR_BODY_BYTES)).toString('utf8')) as unknown;
    if (typeof parsed === 'object' && parsed !== null) status = parsed;
  } catch {
    // Not a Status (e.g. a proxy's HTML page): classify by HTTP status alone.
  }
  const retryAfter = response.headers['retry-after'];
  return ListWatchError.fromStatus(statusCode, status, retryAfter);
}
