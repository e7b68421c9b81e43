import { resourceName, type KubeClient, type KubeObject, type ProtobufDecoder } from '@loopwright/client';
import type { Indexers } from './indexers.ts';
import { Informer, type InformerSettings } from './informer.ts';
import type { ResourceClient } from './list-watch.ts';
import type { ListWatchScope } from './types.ts';

/**
 * Options of {@link SharedInformerFactory}: where informers list and watch, plus settings applied to
 * every informer. `client`: the API server connection, on which each scope gets its resource's handle;
 * `createClient` replaces list/watch altogether (tests, or a custom client).
 */
export type SharedInformerFactoryOptions = Omit<InformerSettings, 'indexers' | 'resyncMs'> &
  ({ client: KubeClient } | { createClient: (scope: ListWatchScope) => ResourceClient<KubeObject> });

/** What to watch through the factory, plus per-caller extras. */
export interface InformerRequest<T extends KubeObject = KubeObject> extends ListWatchScope {
  /** The shared informer resyncs at the shortest period any caller asked for. */
  resyncMs?: number;
  /**
   * Indexes to add to the shared store. A name another caller already registered is accepted only
   * with the same function (same reference), otherwise this throws: two meanings for one index name
   * would silently corrupt one caller's lookups.
   */
  indexers?: Indexers<T>;
  /**
   * Applied to this scope's objects before they are cached, after the factory's own `transform`
   * (controller-runtime's `ByObject.Transform`): e.g. keep only the fields the controllers read of an
   * object they cache by the thousand. One function per scope, fixed before the informer starts: a
   * request naming another function than an earlier one throws, and so does one naming a transform for
   * a scope whose informer is already running (its cache holds untransformed objects). Requests that
   * name none share the scope's transform: every reader of the scope gets the transformed objects, so
   * it must keep whatever any of them reads (see the README).
   */
  transform?: (obj: T) => T;
  /**
   * List and watch this scope in protobuf, each object decoded by this function (see
   * {@link ProtobufDecoder}; built-in kinds only), when the factory has a `client`. Part of the
   * scope, like its transform: it must be named by the request that creates the scope, and a later
   * request naming another function throws.
   */
  protobuf?: ProtobufDecoder<T>;
}

type ObjectTransform = (obj: KubeObject) => KubeObject;

/** What the factory keeps per scope. */
interface Scope {
  listWatch: ListWatchScope;
  informer: Informer<KubeObject>;
  protobuf: ProtobufDecoder<KubeObject> | undefined;
  indexers: Map<string, unknown>;
  transform: ObjectTransform | undefined;
}

/**
 * One informer per (resource, namespace, label selector, field selector) per process, shared by any
 * number of handlers: N controllers watching Pods cost one list and one watch, not N.
 *
 * Informers requested after `start()` start at once (client-go requires another `Start` call).
 */
export class SharedInformerFactory {
  readonly #options: SharedInformerFactoryOptions;
  readonly #scopes = new Map<string, Scope>();
  #started = false;
  #stopped = false;

  constructor(options: SharedInformerFactoryOptions) {
    this.#options = options;
  }

  /** The shared informer for this scope, created on first request. */
  forResource<T extends KubeObject = KubeObject>(request: InformerRequest<T>): Informer<T> {
    if (this.#stopped) throw new Error('informer factory was stopped');
    const key = scopeKey(request);
    let scope = this.#scopes.get(key);
    const created = scope === undefined;
    if (scope === undefined) {
      scope = this.#createScope(request, request.protobuf);
      this.#scopes.set(key, scope);
    }
    if (request.protobuf !== undefined && request.protobuf !== (scope.protobuf as unknown)) {
      throw new Error(
        `${describeScope(request)} ${scope.protobuf === undefined ? 'is read as JSON' : 'has a different protobuf decoder'}: name its decoder in the request that creates the scope`,
      );
    }
    const informer = scope.informer as unknown as Informer<T>;
    if (request.transform !== undefined) {
      setTransform(
        scope,
        request,
        request.transform as unknown as ObjectTransform,
        created || !this.#started,
      );
    }
    if (created && this.#started) informer.start();
    if (request.resyncMs !== undefined) informer.requestResync(request.resyncMs);
    if (request.indexers !== undefined) this.#addIndexers(scope, informer, request.indexers);
    return informer;
  }

  /** Starts every informer requested so far, and any requested later. Idempotent. */
  start(): void {
    if (this.#stopped) throw new Error('informer factory was stopped');
    this.#started = true;
    for (const { informer } of this.#scopes.values()) informer.start();
  }

  /**
   * Resolves when every informer requested so far has synced. Rejects like
   * {@link Informer.waitForSync} (signal aborted, or stopped first).
   */
  async waitForCacheSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.#scopes.values()].map(({ informer }) => informer.waitForSync(signal)));
  }

  /** The informers requested so far that have not synced yet: what {@link waitForCacheSync} waits for. */
  unsyncedInformers(): Informer<KubeObject>[] {
    return [...this.#scopes.values()]
      .map(({ informer }) => informer)
      .filter((informer) => !informer.hasSynced());
  }

  /** Every informer requested so far, with what it lists and watches (a debugging view of the caches). */
  scopes(): { scope: ListWatchScope; informer: Informer<KubeObject> }[] {
    return [...this.#scopes.values()].map(({ listWatch, informer }) => ({ scope: listWatch, informer }));
  }

  /** Stops every informer (quietly, see {@link Informer.stop}). Final. */
  stop(): void {
    this.#stopped = true;
    for (const { informer } of this.#scopes.values()) informer.stop();
  }

  #createScope(request: ListWatchScope, protobuf: ProtobufDecoder<KubeObject> | undefined): Scope {
    const listWatch: ListWatchScope = {
      group: request.group,
      version: request.version,
      plural: request.plural,
      ...(request.kind === undefined ? {} : { kind: request.kind }),
      ...(request.namespaced === undefined ? {} : { namespaced: request.namespaced }),
      ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
      ...(request.labelSelector === undefined ? {} : { labelSelector: request.labelSelector }),
      ...(request.fieldSelector === undefined ? {} : { fieldSelector: request.fieldSelector }),
    };
    const common = this.#options.transform;
    // Looks the scope's own transform up per object, so one named by a later request (before start)
    // applies as well. Called only once objects arrive, after `scope` is assigned.
    const transform = (obj: KubeObject): KubeObject => {
      const shared = common === undefined ? obj : common(obj);
      return scope.transform === undefined ? shared : scope.transform(shared);
    };
    const scope: Scope = {
      listWatch,
      informer: this.#newInformer(listWatch, transform, protobuf),
      protobuf,
      indexers: new Map(),
      transform: undefined,
    };
    return scope;
  }

  #newInformer(
    listWatch: ListWatchScope,
    transform: ObjectTransform,
    protobuf: ProtobufDecoder<KubeObject> | undefined,
  ): Informer<KubeObject> {
    if ('client' in this.#options) {
      const { client, ...settings } = this.#options;
      return new Informer({ ...settings, transform, client, ...listWatch, protobuf });
    }
    const { createClient, ...settings } = this.#options;
    return new Informer({ ...settings, transform, resourceClient: createClient(listWatch) });
  }

  #addIndexers<T extends KubeObject>(scope: Scope, informer: Informer<T>, indexers: Indexers<T>): void {
    const registered = scope.indexers;
    const fresh: Indexers<T> = {};
    for (const [name, indexFunc] of Object.entries(indexers)) {
      const existing = registered.get(name);
      if (existing === indexFunc) continue;
      if (existing !== undefined)
        throw new Error(`index ${name} is already registered with a different function`);
      fresh[name] = indexFunc;
    }
    informer.addIndexers(fresh);
    for (const [name, indexFunc] of Object.entries(fresh)) registered.set(name, indexFunc);
  }
}

/** `settable`: the scope's informer has not started, so its cache holds no object yet. */
function setTransform(
  scope: Scope,
  request: ListWatchScope,
  transform: ObjectTransform,
  settable: boolean,
): void {
  if (scope.transform === transform) return;
  const name = describeScope(request);
  if (scope.transform !== undefined)
    throw new Error(`${name} already has a different transform (one per scope)`);
  if (!settable) throw new Error(`${name} is already cached: name its transform before the factory starts`);
  scope.transform = transform;
}

/** A scope as a reader would name it, e.g. `pods in ns (app=x)`. */
function describeScope(scope: ListWatchScope): string {
  const selectors = [scope.labelSelector, scope.fieldSelector].filter((s) => s !== undefined && s !== '');
  return [
    `informer for ${resourceName(scope)}`,
    scope.namespace === undefined ? 'in all namespaces' : `in ${scope.namespace}`,
    ...(selectors.length === 0 ? [] : [`(${selectors.join(', ')})`]),
  ].join(' ');
}

function scopeKey(scope: ListWatchScope): string {
  return JSON.stringify([
    scope.group,
    scope.version,
    scope.plural,
    scope.namespace ?? '',
    scope.labelSelector ?? '',
    scope.fieldSelector ?? '',
  ]);
}
