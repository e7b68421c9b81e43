/**
 * `Resource<K>`: one typed handle per resource, as kube-rs's `Api<K>` and controller-runtime's
 * `client.Client`. Every call a controller, the informer, leader election or the Event recorder makes
 * to the API server goes through one, so paths, query parameters, preconditions, encodings and the
 * "missing object" cases are written once, here.
 *
 * Errors: every method rejects with a `KubeApiError` (classify it with `isNotFound`, `isConflict`...),
 * except where it says what it resolves with instead: `getOptional` (undefined on 404) and `delete`
 * (false on 404).
 */
import { KubeApiError, type KubeRequestLine } from './api-error.ts';
import { isNotFound } from './classify.ts';
import { itemKindOf, type KubeObject, type ListPage, type ObjectKey, type WatchEvent } from './object.ts';
import { PROTOBUF_MEDIA_TYPE } from './protobuf.ts';
import { decodeListPage, decodeWatchEvent, type ProtobufDecoder } from './protobuf-list-watch.ts';
import {
  apiVersionOf,
  collectionPath,
  objectPath,
  resourceName,
  scopeOf,
  type ResourceType,
} from './resource-type.ts';
import type { KubeRequest } from './kube-request.ts';
import type { KubeTransport } from './transport.ts';
import type { RequestPriority } from './token-bucket.ts';

/** What every call takes. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Its place among requests waiting for a rate-limiter token (see `KubeRequest.priority`). */
  priority?: RequestPriority;
  /** Deadline of the whole request (see `KubeRequest.timeoutMs`). */
  timeoutMs?: number;
}

/** What every write takes. */
export interface WriteOptions extends CallOptions {
  /** Who makes the write, for the server's field ownership; default: the client's `fieldManager`. */
  fieldManager?: string;
  /** Validate and admit the write without persisting it (`dryRun=All`): the answer is what it would be. */
  dryRun?: boolean;
  /**
   * What the server does with a field the schema does not know or a field given twice: `Strict` refuses
   * the write (400), `Warn` (the server's default) writes and warns, `Ignore` drops it silently.
   */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

/**
 * A write whose answer is not read, only its success: the server is asked for the object's
 * `PartialObjectMetadata` in protobuf, the cheapest answer to encode, and the call resolves with nothing.
 */
export interface NoAnswer {
  answer: 'none';
}

/** The encoding of a write's body. `protobuf` needs the handle's `protobuf.encode` (built-in kinds only). */
export interface EncodingOption {
  encoding?: 'json' | 'protobuf';
}

/** A patch, by its type. */
export type Patch =
  /** JSON merge patch (RFC 7386): `null` deletes a field, arrays are replaced whole. Works on every resource. */
  | { merge: object }
  /** JSON patch (RFC 6902): a list of operations, applied in order, all or nothing. */
  | { json: JsonPatchOperation[] }
  /** Server-side apply: `body` is the fields this field manager owns, whole (see `Resource.apply`). */
  | { apply: object };

/** One RFC 6902 operation. */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

export interface PatchOptions extends WriteOptions {
  /**
   * Apply the patch only if the object is still at this `metadata.resourceVersion`: otherwise 409
   * Conflict, so a write never overwrites state its author has not seen. A merge or apply patch
   * carries it in its body's metadata, a JSON patch as a leading operation that sets it: the server
   * then writes only at that version, as for an update. (A `test` operation would fail as 422
   * Invalid, not as the Conflict every other stale write is.)
   */
  resourceVersion?: string;
  /** Server-side apply only: take the fields other managers own instead of failing with 409 Conflict. */
  force?: boolean;
}

export interface DeleteOptions extends CallOptions {
  /** Delete only this object: 409 Conflict when the name now holds another (uid) or a newer version. */
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  dryRun?: boolean;
}

/** A list's or watch's scope and filters. */
export interface ListOptions extends CallOptions {
  /** One namespace; omitted: all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** See {@link WatchOptions.shardSelector}; the page says whether the server applied it. */
  shardSelector?: string;
  /** Page size; the answer's `continue` names the next page. */
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  /** Read the list in protobuf, each item decoded by the handle's `protobuf.decode`. */
  encoding?: 'json' | 'protobuf';
}

export interface WatchOptions {
  signal: AbortSignal;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Only objects whose hash falls in these ranges (KEP-5866, kube-apiserver 1.36 with the
   * ShardedListAndWatch feature gate): `shardRange(object.metadata.uid, '0x0000000000000000',
   * '0x8000000000000000')`, several joined with ` || `, one field in all. A server with the feature on
   * refuses a malformed one (1.36.3 answers 500 InternalError); one with it off ignores the parameter
   * and sends every object, which only a list tells (`ListPage.shardSelector` is then absent).
   */
  shardSelector?: string;
  /** Watch from here (exclusive): a list's resourceVersion or the last event's. */
  resourceVersion?: string;
  /** The API server ends the watch cleanly after this many seconds. */
  timeoutSeconds?: number;
  /** No byte at all for this long: the connection is dead, the watch throws a `timeout` KubeApiError. */
  idleTimeoutMs?: number;
  /** Default true: the server sends BOOKMARK events, so a re-watch resumes from a recent version. */
  allowWatchBookmarks?: boolean;
  /**
   * A streaming list (WatchList, KEP-3157): the watch first sends the collection's state at
   * `resourceVersion` or newer (`''`: the newest, a consistent read) as ADDED events, then a BOOKMARK
   * annotated `k8s.io/initial-events-end: "true"`, then changes. Sends `resourceVersionMatch=NotOlderThan`
   * with it, which the API server requires. A server with the WatchList feature off answers 422 Invalid.
   */
  sendInitialEvents?: boolean;
  /** Read events in protobuf, each object decoded by the handle's `protobuf.decode`. */
  encoding?: 'json' | 'protobuf';
}

/** A text read's options: the subresource's query parameters, as the API documents them. */
export interface TextOptions extends CallOptions {
  query?: Record<string, string | number | boolean>;
}

/** A built-in kind's protobuf codec: an encoder for writes, a decoder for lists and watches. */
export interface ProtobufCodec<K extends KubeObject> {
  encode?: (object: K) => Uint8Array;
  decode?: ProtobufDecoder<K>;
}

/** What a handle needs of its client: the transport, and the defaults of its writes. */
export interface ResourceContext {
  transport: KubeTransport;
  /** Default `fieldManager` of every write. */
  fieldManager?: string | undefined;
}

/**
 * The `Accept` of a write whose answer is not read: the object's `PartialObjectMetadata` in protobuf. An
 * error's `Status` still comes as JSON, the second choice.
 */
const ACCEPT_NO_ANSWER = `${PROTOBUF_MEDIA_TYPE};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json`;

const PATCH_CONTENT_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

export class Resource<K extends KubeObject> {
  readonly type: ResourceType;
  /** `resource.group`, for logs and metrics. */
  readonly name: string;
  readonly #context: ResourceContext;
  readonly #protobuf: ProtobufCodec<K> | undefined;
  readonly #subresource: string | undefined;

  constructor(
    context: ResourceContext,
    type: ResourceType,
    options: { protobuf?: ProtobufCodec<K> | undefined; subresource?: string | undefined } = {},
  ) {
    this.#context = context;
    this.type = type;
    this.name = resourceName(type);
    this.#protobuf = options.protobuf;
    this.#subresource = options.subresource;
  }

  /** The same resource with a protobuf codec for its writes, lists and watches (built-in kinds only). */
  withProtobuf(codec: ProtobufCodec<K>): Resource<K> {
    return new Resource<K>(this.#context, this.type, { protobuf: codec, subresource: this.#subresource });
  }

  /**
   * The `status` subresource: `get`, `update`, `patch` and `apply` there write only `status` (and
   * `metadata`), the only way to write status when the CRD enables the subresource.
   */
  get status(): Resource<K> {
    return this.subresource('status');
  }

  /** Any other subresource (`scale`, `eviction`...), with the same calls. */
  subresource(name: string): Resource<K> {
    if (this.#subresource !== undefined) throw new TypeError(`${this.name}: a subresource has none`);
    return new Resource<K>(this.#context, this.type, { protobuf: this.#protobuf, subresource: name });
  }

  /** The object (a live read, not a cache). Rejects with NotFound when there is none. */
  async get(key: ObjectKey, options: CallOptions = {}): Promise<K> {
    return this.#json<K>('GET', this.#objectPath(key), options);
  }

  /** The object, or undefined when there is none (404): kube-rs's `get_opt`. */
  async getOptional(key: ObjectKey, options: CallOptions = {}): Promise<K | undefined> {
    try {
      return await this.get(key, options);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * One page of the collection (all of it without `limit`). Items get `apiVersion` and `kind`, which the
   * API server leaves out of a list's items, so an object looks the same from a list as from a get.
   */
  async list(options: ListOptions = {}): Promise<ListPage<K>> {
    const query = selectors(options);
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.continue !== undefined) query.set('continue', options.continue);
    if (options.resourceVersion !== undefined) query.set('resourceVersion', options.resourceVersion);
    if (options.resourceVersionMatch !== undefined) {
      query.set('resourceVersionMatch', options.resourceVersionMatch);
    }
    const path = withQuery(this.#collectionPath(options.namespace), query);
    const request = { path, ...callFields(options) };
    if (options.encoding === 'protobuf') {
      const decode = this.#decoder();
      const response = await this.#context.transport.request({
        ...request,
        headers: { Accept: PROTOBUF_MEDIA_TYPE },
      });
      try {
        return decodeListPage(response.body, decode);
      } catch (error) {
        throw KubeApiError.undecodable(response.status, error, requestLine('GET', path));
      }
    }
    const list = await this.#context.transport.requestJson<ListBody<K>>(request);
    const kind = itemKindOf(list.kind) ?? this.type.kind;
    const apiVersion = list.apiVersion ?? apiVersionOf(this.type);
    const items = list.items ?? [];
    for (const item of items) {
      if (item.kind === undefined) {
        item.apiVersion = apiVersion;
        item.kind = kind;
      }
    }
    const shardSelector = list.metadata?.shardInfo?.selector;
    return {
      items,
      resourceVersion: list.metadata?.resourceVersion ?? '',
      continue: list.metadata?.continue ?? '',
      ...(shardSelector === undefined ? {} : { shardSelector }),
    };
  }

  /**
   * Watches the collection: yields each event as it arrives, `ERROR` events included (for the caller to
   * classify), and ends when the server ends the watch (its `timeoutSeconds`) or `signal` aborts.
   * Throws a `KubeApiError` when the watch cannot start or breaks. No rate-limiter token: a watch is one
   * long request, as in client-go.
   */
  async *watch(options: WatchOptions): AsyncGenerator<WatchEvent<K>, void, undefined> {
    const query = selectors(options);
    query.set('watch', '1');
    if (options.allowWatchBookmarks !== false) query.set('allowWatchBookmarks', 'true');
    if (options.resourceVersion !== undefined) query.set('resourceVersion', options.resourceVersion);
    if (options.sendInitialEvents === true) {
      query.set('sendInitialEvents', 'true');
      query.set('resourceVersionMatch', 'NotOlderThan');
    }
    if (options.timeoutSeconds !== undefined) query.set('timeoutSeconds', String(options.timeoutSeconds));
    const path = withQuery(this.#collectionPath(options.namespace), query);
    const decode = options.encoding === 'protobuf' ? this.#decoder() : undefined;
    try {
      const documents = this.#context.transport.watch({
        path,
        signal: options.signal,
        idleTimeoutMs: options.idleTimeoutMs,
        protobuf: decode !== undefined,
      });
      if (decode === undefined) {
        // Each document is a watch event: the API server's wire format, checked by the caller.
        yield* documents as AsyncIterable<WatchEvent<K>>;
        return;
      }
      for await (const frame of documents as AsyncIterable<Buffer>) {
        let event: WatchEvent<K>;
        try {
          event = decodeWatchEvent(frame, decode);
        } catch (error) {
          throw KubeApiError.undecodable(200, error, requestLine('GET', path));
        }
        yield event;
      }
    } catch (error) {
      if (options.signal.aborted) return;
      throw error;
    }
  }

  /**
   * Creates `object` in `object.metadata.namespace` (required for a namespaced resource). Rejects with
   * AlreadyExists when the name is taken. `apiVersion` and `kind` are the handle's when missing. On a
   * subresource that is created (a pod's `eviction`, a service account's `token`), posts `object`, as
   * it is, to that subresource of the object its metadata names.
   */
  create(object: K, options: WriteOptions & EncodingOption & NoAnswer): Promise<void>;
  create(object: K, options?: WriteOptions & EncodingOption): Promise<K>;
  async create(
    object: K,
    options: WriteOptions & EncodingOption & Partial<NoAnswer> = {},
  ): Promise<K | void> {
    const target =
      this.#subresource === undefined
        ? // Unlike a list's, a create's namespace is the object's: required for a namespaced resource.
          collectionPath(this.type, scopeOf(this.type, object.metadata?.namespace))
        : this.#objectPath(keyOf(object));
    const body = this.#subresource === undefined ? this.#typed(object) : object;
    return this.#write('POST', withQuery(target, this.#writeQuery(options)), body, options);
  }

  /**
   * Replaces the object (PUT) named by its metadata (`apiVersion` and `kind` the handle's when
   * missing, on the object and its status). With `metadata.resourceVersion` set, only if the
   * object is still at it, and with `metadata.uid` set, only if the name still holds that object: 409
   * Conflict otherwise.
   */
  update(object: K, options: WriteOptions & EncodingOption & NoAnswer): Promise<void>;
  update(object: K, options?: WriteOptions & EncodingOption): Promise<K>;
  async update(
    object: K,
    options: WriteOptions & EncodingOption & Partial<NoAnswer> = {},
  ): Promise<K | void> {
    const path = withQuery(this.#objectPath(keyOf(object)), this.#writeQuery(options));
    const body =
      this.#subresource === undefined || this.#subresource === 'status' ? this.#typed(object) : object;
    return this.#write('PUT', path, body, options);
  }

  /** Patches the object (or the subresource) named by `key`; resolves with the object as written. */
  async patch(key: ObjectKey, patch: Patch, options: PatchOptions = {}): Promise<K> {
    const query = this.#writeQuery(options);
    let type: keyof typeof PATCH_CONTENT_TYPES;
    let body: unknown;
    if ('json' in patch) {
      type = 'json';
      body =
        options.resourceVersion === undefined
          ? patch.json
          : [
              { op: 'replace', path: '/metadata/resourceVersion', value: options.resourceVersion },
              ...patch.json,
            ];
    } else {
      type = 'merge' in patch ? 'merge' : 'apply';
      const object = 'merge' in patch ? patch.merge : patch.apply;
      body =
        options.resourceVersion === undefined ? object : withResourceVersion(object, options.resourceVersion);
    }
    if (type === 'apply') {
      if (!query.has('fieldManager')) {
        throw new TypeError(`${this.name}: server-side apply needs a fieldManager`);
      }
      if (options.force === true) query.set('force', 'true');
    } else if (options.force !== undefined) {
      throw new TypeError(`${this.name}: force applies to server-side apply only`);
    }
    return this.#json<K>('PATCH', withQuery(this.#objectPath(key), query), options, {
      body,
      contentType: PATCH_CONTENT_TYPES[type],
    });
  }

  /**
   * Server-side apply of `configuration`, named by its own metadata: the fields in it become this field
   * manager's, set to its values; fields it owned before and left out are removed (or given back).
   * `configuration` needs `apiVersion` and `kind` (filled in from the handle when missing). A field
   * another manager owns with another value fails with 409 Conflict, unless `force`.
   */
  async apply(configuration: K, options: Omit<PatchOptions, 'resourceVersion'> = {}): Promise<K> {
    return this.patch(keyOf(configuration), { apply: this.#typed(configuration) }, options);
  }

  /**
   * Deletes the object. Resolves true once the server accepted the deletion (finalizers may still hold
   * the object), false when there was no such object (404): deleting what is gone is done. Rejects with
   * Conflict when a precondition fails.
   */
  async delete(key: ObjectKey, options: DeleteOptions = {}): Promise<boolean> {
    try {
      await this.#json('DELETE', this.#objectPath(key), options, { body: deleteOptions(options) });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /**
   * Deletes every object of the collection that the selectors pick (all of them without one), in one
   * namespace or, for a cluster-scoped resource, across the cluster. Rejects as `delete` does.
   */
  async deleteCollection(
    options: Pick<ListOptions, 'namespace' | 'labelSelector' | 'fieldSelector'> &
      Omit<DeleteOptions, 'preconditions'> = {},
  ): Promise<void> {
    const path = withQuery(this.#collectionPath(options.namespace), selectors(options));
    await this.#json('DELETE', path, options, { body: deleteOptions(options) });
  }

  /**
   * The object's (sub)resource read as text, not JSON: a pod's log (`pods.subresource('log')`), with
   * its query (`container`, `tailLines`, `timestamps`...). Rejects with a `KubeApiError` unless 2xx
   * (a container that has not started: 400 BadRequest).
   */
  async getText(key: ObjectKey, options: TextOptions = {}): Promise<string> {
    const response = await this.#context.transport.request({
      path: withQuery(this.#objectPath(key), textQuery(options.query)),
      headers: { Accept: '*/*' },
      ...callFields(options),
    });
    return response.body.toString('utf8');
  }

  /**
   * The same text as it arrives, for a response the server keeps open (a log with `follow: true`):
   * ends when the server ends it, or quietly when `signal` aborts; throws a `KubeApiError` for an
   * error status or a connection that breaks (or stays silent beyond `idleTimeoutMs`). No
   * rate-limiter token, as a watch.
   */
  async *streamText(
    key: ObjectKey,
    options: Omit<TextOptions, 'priority' | 'timeoutMs'> & { signal: AbortSignal; idleTimeoutMs?: number },
  ): AsyncGenerator<string, void, undefined> {
    try {
      const pieces = this.#context.transport.watch({
        path: withQuery(this.#objectPath(key), textQuery(options.query)),
        signal: options.signal,
        text: true,
        idleTimeoutMs: options.idleTimeoutMs,
      });
      yield* pieces as AsyncIterable<string>;
    } catch (error) {
      if (options.signal.aborted) return;
      throw error;
    }
  }

  /**
   * `object` with the handle's `apiVersion` and `kind` where it has none: the API server needs them in
   * the body of a custom resource's write (a built-in kind's it takes from the path).
   */
  #typed(object: K): K {
    return {
      ...object,
      apiVersion: object.apiVersion ?? apiVersionOf(this.type),
      kind: object.kind ?? this.type.kind,
    };
  }

  #objectPath(key: ObjectKey): string {
    return objectPath(this.type, key, this.#subresource);
  }

  #collectionPath(namespace: string | undefined): string {
    if (this.#subresource !== undefined) {
      throw new TypeError(`${this.name}: a subresource belongs to one object, it has no collection`);
    }
    // A collection may span namespaces: only a cluster-scoped resource refuses one.
    return collectionPath(this.type, namespace === undefined ? undefined : scopeOf(this.type, namespace));
  }

  #writeQuery(options: WriteOptions): URLSearchParams {
    const query = new URLSearchParams();
    const fieldManager = options.fieldManager ?? this.#context.fieldManager;
    if (fieldManager !== undefined) query.set('fieldManager', fieldManager);
    if (options.dryRun === true) query.set('dryRun', 'All');
    if (options.fieldValidation !== undefined) query.set('fieldValidation', options.fieldValidation);
    return query;
  }

  #decoder(): ProtobufDecoder<K> {
    const decode = this.#protobuf?.decode;
    if (decode === undefined) throw new TypeError(`${this.name}: no protobuf decoder (withProtobuf)`);
    return decode;
  }

  async #write(
    method: string,
    path: string,
    object: K,
    options: WriteOptions & EncodingOption & Partial<NoAnswer>,
  ): Promise<K | undefined> {
    const noAnswer = options.answer === 'none';
    if (options.encoding === 'protobuf') {
      const encode = this.#protobuf?.encode;
      if (encode === undefined) throw new TypeError(`${this.name}: no protobuf encoder (withProtobuf)`);
      const headers = {
        'Content-Type': PROTOBUF_MEDIA_TYPE,
        Accept: noAnswer ? ACCEPT_NO_ANSWER : 'application/json',
      };
      const response = await this.#context.transport.request({
        method,
        path,
        body: encode(object),
        headers,
        ...callFields(options),
      });
      return noAnswer ? undefined : (parseJson(response.body, response.status, method, path) as K);
    }
    if (noAnswer) {
      await this.#context.transport.request({
        method,
        path,
        body: JSON.stringify(object),
        headers: { 'Content-Type': 'application/json', Accept: ACCEPT_NO_ANSWER },
        ...callFields(options),
      });
      return undefined;
    }
    return this.#json<K>(method, path, options, { body: object });
  }

  #json<T>(
    method: string,
    path: string,
    options: CallOptions,
    body: { body: unknown; contentType?: string } | Record<string, never> = {},
  ): Promise<T> {
    return this.#context.transport.requestJson<T>({ method, path, ...body, ...callFields(options) });
  }
}

interface ListBody<K> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string; shardInfo?: { selector?: string } };
  items?: K[];
}

function keyOf(object: KubeObject): ObjectKey {
  const { name, namespace } = object.metadata ?? {};
  if (name === undefined || name === '') throw new TypeError('the object has no metadata.name');
  return { namespace, name };
}

function withResourceVersion(object: object, resourceVersion: string): object {
  const metadata = (object as { metadata?: object }).metadata ?? {};
  return { ...object, metadata: { ...metadata, resourceVersion } };
}

function selectors(options: {
  labelSelector?: string;
  fieldSelector?: string;
  shardSelector?: string;
}): URLSearchParams {
  const query = new URLSearchParams();
  if (options.labelSelector !== undefined) query.set('labelSelector', options.labelSelector);
  if (options.fieldSelector !== undefined) query.set('fieldSelector', options.fieldSelector);
  if (options.shardSelector !== undefined) query.set('shardSelector', options.shardSelector);
  return query;
}

function textQuery(query: TextOptions['query']): URLSearchParams {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) search.set(name, String(value));
  return search;
}

function withQuery(path: string, query: URLSearchParams): string {
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}

function callFields(options: CallOptions): Pick<KubeRequest, 'signal' | 'priority' | 'timeoutMs'> {
  return { signal: options.signal, priority: options.priority, timeoutMs: options.timeoutMs };
}

/** The body of a delete: `metav1.DeleteOptions` (an option left undefined is absent from the JSON). */
function deleteOptions(options: Omit<DeleteOptions, keyof CallOptions>): object {
  return {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    preconditions: options.preconditions,
    propagationPolicy: options.propagationPolicy,
    gracePeriodSeconds: options.gracePeriodSeconds,
    dryRun: options.dryRun === true ? ['All'] : undefined,
  };
}

/** An error's request line: the path without its query, as every KubeApiError has it. */
function requestLine(method: string, path: string): KubeRequestLine {
  return { method, path: path.replace(/\?.*$/, '') };
}

function parseJson(body: Buffer, status: number, method: string, path: string): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw KubeApiError.undecodable(status, error, requestLine(method, path));
  }
}
