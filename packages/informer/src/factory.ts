import type { KubeTransport } from '@loopwright/core';
import type { Indexers } from './indexers.ts';
import { Informer, type InformerSettings } from './informer.ts';
import type { ResourceClient } from './list-watch.ts';
import type { KubeObject, ListWatchScope } from './types.ts';

/**
 * Options of {@link SharedInformerFactory}: where informers list and watch, plus settings applied to
 * every informer. `transport`: the API server connection; `createClient` replaces list/watch
 * altogether (tests, or a custom client).
 */
export type SharedInformerFactoryOptions = Omit<InformerSettings, 'indexers' | 'resyncMs'> &
  ({ transport: KubeTransport } | { createClient: (scope: ListWatchScope) => ResourceClient<KubeObject> });

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
}

/**
 * One informer per (resource, namespace, label selector, field selector) per process, shared by any
 * number of handlers: N controllers watching Pods cost one list and one watch, not N.
 *
 * Informers requested after `start()` start at once (client-go requires another `Start` call).
 */
export class SharedInformerFactory {
  readonly #options: SharedInformerFactoryOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #indexers = new Map<string, Map<string, unknown>>();
  #started = false;
  #stopped = false;

  constructor(options: SharedInformerFactoryOptions) {
    this.#options = options;
  }

  /** The shared informer for this scope, created on first request. */
  forResource<T extends KubeObject = KubeObject>(request: InformerRequest<T>): Informer<T> {
    if (this.#stopped) throw new Error('informer factory was stopped');
    const key = scopeKey(request);
    let informer = this.#informers.get(key) as Informer<T> | undefined;
    if (informer === undefined) {
      const scope: ListWatchScope = {
        group: request.group,
        version: request.version,
        plural: request.plural,
        ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
        ...(request.labelSelector === undefined ? {} : { labelSelector: request.labelSelector }),
        ...(request.fieldSelector === undefined ? {} : { fieldSelector: request.fieldSelector }),
      };
      if ('transport' in this.#options) {
        const { transport, ...settings } = this.#options;
        informer = new Informer<T>({ ...(settings as InformerSettings<T>), transport, ...scope });
      } else {
        const { createClient, ...settings } = this.#options;
        const client = createClient(scope) as ResourceClient<T>;
        informer = new Informer<T>({ ...(settings as InformerSettings<T>), client });
      }
      this.#informers.set(key, informer as unknown as Informer<KubeObject>);
      this.#indexers.set(key, new Map());
      if (this.#started) informer.start();
    }
    if (request.resyncMs !== undefined) informer.requestResync(request.resyncMs);
    if (request.indexers !== undefined) this.#addIndexers(key, informer, request.indexers);
    return informer;
  }

  /** Starts every informer requested so far, and any requested later. Idempotent. */
  start(): void {
    if (this.#stopped) throw new Error('informer factory was stopped');
    this.#started = true;
    for (const informer of this.#informers.values()) informer.start();
  }

  /**
   * Resolves when every informer requested so far has synced. Rejects like
   * {@link Informer.waitForSync} (signal aborted, or stopped first).
   */
  async waitForCacheSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.#informers.values()].map((informer) => informer.waitForSync(signal)));
  }

  /** The informers requested so far that have not synced yet: what {@link waitForCacheSync} waits for. */
  unsyncedInformers(): Informer<KubeObject>[] {
    return [...this.#informers.values()].filter((informer) => !informer.hasSynced());
  }

  /** Stops every informer (quietly, see {@link Informer.stop}). Final. */
  stop(): void {
    this.#stopped = true;
    for (const informer of this.#informers.values()) informer.stop();
  }

  #addIndexers<T extends KubeObject>(key: string, informer: Informer<T>, indexers: Indexers<T>): void {
    const registered = this.#indexers.get(key) ?? new Map<string, unknown>();
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
