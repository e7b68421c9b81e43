import type { KubeObject } from '@loopwright/client';

/**
 * Computes the index values of an object. Must be pure and cheap: it runs on every add, update and
 * delete, and for the old object on update/delete (which is how stale entries are found, like
 * client-go's indexer, without keeping a reverse map per object).
 */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => readonly string[];

/** Named index functions, e.g. `{ byOwner: controllerOwnerIndex, byApp: labelIndex('app') }`. */
export type Indexers<T extends KubeObject = KubeObject> = Record<string, IndexFunc<T>>;

/** Cache key of an object: `namespace/name`, or `name` for cluster-scoped objects (client-go's `MetaNamespaceKeyFunc`). */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name ?? '';
  const namespace = obj.metadata?.namespace;
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}

/** Builds the cache key for a namespace and name (`name` alone when `namespace` is empty). */
export function keyFor(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}

/**
 * Name of the index every store serves without an index function: its objects are kept per namespace
 * (`''` for cluster-scoped objects), so `byIndex(NAMESPACE_INDEX, ns)` is `list(ns)`.
 */
export const NAMESPACE_INDEX = 'namespace';

/**
 * Indexes by the UID of the controller owner (`ownerReferences[].controller === true`), the lookup
 * a controller needs to map an owned object back to its owner, or an owner to its children.
 */
export const controllerOwnerIndex: IndexFunc = (obj) => {
  for (const owner of obj.metadata?.ownerReferences ?? []) {
    if (owner.controller === true) return [owner.uid];
  }
  return [];
};

const labelIndexes = new Map<string, IndexFunc>();

/**
 * Indexes by the value of one label; objects without the label are not indexed. The same function for
 * the same label: a shared informer accepts an index name again only with the same function, so two
 * controllers that each ask for `labelIndex('app')` must get one.
 */
export function labelIndex(label: string): IndexFunc {
  let indexFunc = labelIndexes.get(label);
  if (indexFunc === undefined) {
    indexFunc = (obj) => {
      const value = obj.metadata?.labels?.[label];
      return value === undefined ? [] : [value];
    };
    labelIndexes.set(label, indexFunc);
  }
  return indexFunc;
}
