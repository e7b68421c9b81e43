import {
  keyFor,
  NAMESPACE_INDEX,
  namespaceIndex,
  objectKey,
  type IndexFunc,
  type Indexers,
} from './indexers.ts';
import type { KubeObject } from './types.ts';

/**
 * Read access to a cache. Objects returned are SHARED with the cache and every other reader: never
 * mutate them (copy with `structuredClone` first). Mutating one corrupts the cache silently, and the
 * next update diff compares against the mutated copy. Enable `freezeObjects` in development to turn
 * such bugs into TypeErrors.
 */
export interface Lister<T extends KubeObject> {
  /** The object with this namespace and name (`namespace` `''`/undefined for cluster-scoped). */
  get(namespace: string | undefined, name: string): T | undefined;
  /** All objects, or those of one namespace (served from the namespace index, not a scan). */
  list(namespace?: string): T[];
  /** Objects whose index function returned `value`. Throws for an unknown index name (a programming error). */
  byIndex(indexName: string, value: string): T[];
}

/**
 * Thread-free (single event loop) indexed cache keyed by {@link objectKey}. Each index is a map from
 * value to the set of keys: `byIndex` is O(1) plus the size of the result.
 */
export class Store<T extends KubeObject> implements Lister<T> {
  readonly #items = new Map<string, T>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  readonly #indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Indexers<T> = {}) {
    this.addIndexers({ [NAMESPACE_INDEX]: namespaceIndex, ...indexers });
  }

  /** Adds indexes; existing objects are indexed at once, so this also works on a running informer. */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, indexFunc] of Object.entries(indexers)) {
      if (this.#indexers.has(name)) throw new Error(`index ${name} already exists`);
      this.#indexers.set(name, indexFunc);
      const index = new Map<string, Set<string>>();
      this.#indices.set(name, index);
      for (const [key, obj] of this.#items) addToIndex(index, indexFunc(obj), key);
    }
  }

  get size(): number {
    return this.#items.size;
  }

  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.#items.get(keyFor(namespace, name));
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.#items.values()];
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  keys(): IterableIterator<string> {
    return this.#items.keys();
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.#indices.get(indexName);
    if (index === undefined) throw new Error(`index ${indexName} does not exist`);
    const keys = index.get(value);
    if (keys === undefined) return [];
    const result: T[] = [];
    for (const key of keys) {
      const obj = this.#items.get(key);
      if (obj !== undefined) result.push(obj);
    }
    return result;
  }

  /** Inserts or replaces; returns the previous object under the same key. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const previous = this.#items.get(key);
    this.#items.set(key, obj);
    for (const [name, indexFunc] of this.#indexers) {
      const index = this.#indices.get(name);
      if (index === undefined) continue;
      if (previous !== undefined) removeFromIndex(index, indexFunc(previous), key);
      addToIndex(index, indexFunc(obj), key);
    }
    return previous;
  }

  /** Removes by key; returns the removed object. */
  deleteByKey(key: string): T | undefined {
    const previous = this.#items.get(key);
    if (previous === undefined) return undefined;
    this.#items.delete(key);
    for (const [name, indexFunc] of this.#indexers) {
      const index = this.#indices.get(name);
      if (index !== undefined) removeFromIndex(index, indexFunc(previous), key);
    }
    return previous;
  }
}

function addToIndex(index: Map<string, Set<string>>, values: readonly string[], key: string): void {
  for (const value of values) {
    let keys = index.get(value);
    if (keys === undefined) {
      keys = new Set();
      index.set(value, keys);
    }
    keys.add(key);
  }
}

function removeFromIndex(index: Map<string, Set<string>>, values: readonly string[], key: string): void {
  for (const value of values) {
    const keys = index.get(value);
    if (keys === undefined) continue;
    keys.delete(key);
    // Drop empty sets so that indexes over high-churn values (owner UIDs) do not grow forever.
    if (keys.size === 0) index.delete(value);
  }
}
