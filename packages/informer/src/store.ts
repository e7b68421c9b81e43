import { NAMESPACE_INDEX, type IndexFunc, type Indexers } from './indexers.ts';
import type { KubeObject } from '@loopwright/client';

/**
 * Read access to a cache. Objects returned are SHARED with the cache and every other reader: never
 * mutate them (copy with `structuredClone` first). Mutating one corrupts the cache silently, and the
 * next update diff compares against the mutated copy. Enable `freezeObjects` in development to turn
 * such bugs into TypeErrors.
 */
export interface Lister<T extends KubeObject> {
  /** The object with this namespace and name (`namespace` `''`/undefined for cluster-scoped). */
  get(namespace: string | undefined, name: string): T | undefined;
  /** All objects, or those of one namespace (a map lookup, not a scan). */
  list(namespace?: string): T[];
  /**
   * Objects whose index function returned `value`; `byIndex('namespace', ns)` is `list(ns)`. Throws
   * for an unknown index name (a programming error).
   */
  byIndex(indexName: string, value: string): T[];
}

/**
 * Thread-free (single event loop) indexed cache of objects by namespace and name.
 *
 * Memory is per object what the object itself costs plus a few map entries: objects are held in one
 * map per namespace (which is also the `namespace` index), keyed by the object's own `name` string,
 * and each index maps a value to the set of objects themselves. No `namespace/name` key string is
 * built per cached object.
 */
export class Store<T extends KubeObject> implements Lister<T> {
  /** namespace (`''` for cluster-scoped objects) -> name -> object. */
  readonly #namespaces = new Map<string, Map<string, T>>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  readonly #indices = new Map<string, Map<string, Set<T>>>();
  #size = 0;

  constructor(indexers: Indexers<T> = {}) {
    this.addIndexers(indexers);
  }

  /** Adds indexes; existing objects are indexed at once, so this also works on a running informer. */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, indexFunc] of Object.entries(indexers)) {
      if (name === NAMESPACE_INDEX || this.#indexers.has(name))
        throw new Error(`index ${name} already exists`);
      this.#indexers.set(name, indexFunc);
      const index = new Map<string, Set<T>>();
      this.#indices.set(name, index);
      for (const objects of this.#namespaces.values()) {
        for (const obj of objects.values()) addToIndex(index, indexFunc(obj), obj);
      }
    }
  }

  get size(): number {
    return this.#size;
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.#namespaces.get(namespace ?? '')?.get(name);
  }

  list(namespace?: string): T[] {
    if (namespace !== undefined) return [...(this.#namespaces.get(namespace)?.values() ?? [])];
    const result: T[] = [];
    for (const objects of this.#namespaces.values()) for (const obj of objects.values()) result.push(obj);
    return result;
  }

  byIndex(indexName: string, value: string): T[] {
    if (indexName === NAMESPACE_INDEX) return this.list(value);
    const index = this.#indices.get(indexName);
    if (index === undefined) throw new Error(`index ${indexName} does not exist`);
    return [...(index.get(value) ?? [])];
  }

  /** Inserts or replaces the object with the same namespace and name; returns the previous one. */
  upsert(obj: T): T | undefined {
    const namespace = obj.metadata?.namespace ?? '';
    let objects = this.#namespaces.get(namespace);
    if (objects === undefined) {
      objects = new Map();
      this.#namespaces.set(namespace, objects);
    }
    const name = obj.metadata?.name ?? '';
    const previous = objects.get(name);
    objects.set(name, obj);
    if (previous === undefined) this.#size++;
    for (const [indexName, indexFunc] of this.#indexers) {
      const index = this.#indices.get(indexName);
      if (index === undefined) continue;
      if (previous !== undefined) removeFromIndex(index, indexFunc(previous), previous);
      addToIndex(index, indexFunc(obj), obj);
    }
    return previous;
  }

  /** Removes the object with this namespace and name; returns it. */
  delete(namespace: string | undefined, name: string): T | undefined {
    const objects = this.#namespaces.get(namespace ?? '');
    const previous = objects?.get(name);
    if (objects === undefined || previous === undefined) return undefined;
    objects.delete(name);
    // An emptied namespace goes, so that namespaces that come and go do not accumulate maps.
    if (objects.size === 0) this.#namespaces.delete(namespace ?? '');
    this.#size--;
    for (const [indexName, indexFunc] of this.#indexers) {
      const index = this.#indices.get(indexName);
      if (index !== undefined) removeFromIndex(index, indexFunc(previous), previous);
    }
    return previous;
  }
}

function addToIndex<T>(index: Map<string, Set<T>>, values: readonly string[], obj: T): void {
  for (const value of values) {
    let objects = index.get(value);
    if (objects === undefined) {
      objects = new Set();
      index.set(value, objects);
    }
    objects.add(obj);
  }
}

function removeFromIndex<T>(index: Map<string, Set<T>>, values: readonly string[], obj: T): void {
  for (const value of values) {
    const objects = index.get(value);
    if (objects === undefined) continue;
    objects.delete(obj);
    // Drop empty sets so that indexes over high-churn values (owner UIDs) do not grow forever.
    if (objects.size === 0) index.delete(value);
  }
}
