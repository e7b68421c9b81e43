import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@loopwright/informer';

/**
 * Which watch events enqueue a reconcile, as controller-runtime's `predicate.Predicate` (and kube-rs's
 * `predicate_filter`). Each function answers "should this event enqueue?". An omitted function lets
 * every event of its kind through, as a nil function in controller-runtime's `predicate.Funcs`, so a
 * custom predicate names only what it filters: `{ update: (oldObj, newObj) => ... }`.
 *
 * A predicate sees the watched object (the owned Pod, not its owner) before it is mapped to keys.
 * How the informer's events reach it (see `enqueueFiltered`):
 * - `create`: the initial list, a watch ADDED, or an object a relist found.
 * - `update`: a real change; `oldObj` is the last state the cache held, which after a relist may be
 *   several versions behind `newObj`, so nothing that changed while disconnected is hidden from it.
 * - `delete`: `finalStateUnknown` when a relist noticed the deletion and `obj` is the last state seen.
 * - `resync`: a periodic resync re-delivered an unchanged object. controller-runtime judges a resync
 *   as an update of an object to itself, so `GenerationChangedPredicate` silently drops every resync;
 *   here it is its own event, which the change predicates below let through: nothing changed that
 *   they could judge, and a resync exists to reconcile anyway.
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?: (obj: T) => boolean;
  update?: (oldObj: T, newObj: T) => boolean;
  delete?: (obj: T, info: { finalStateUnknown: boolean }) => boolean;
  resync?: (obj: T) => boolean;
}

/**
 * Updates pass when `metadata.generation` changed: the API server bumps it for spec changes (for
 * custom resources only with the status subresource enabled), so status and metadata writes are
 * ignored. An update where either object has no generation (ConfigMaps, and Pods before Kubernetes
 * 1.33) passes, as kube-rs's `predicates::generation`: controller-runtime's
 * `GenerationChangedPredicate` would compare 0 with 0 and drop every update of such objects.
 */
export const generationChanged: Predicate = {
  // Dropped only when both objects have the same generation (a missing one on either side differs).
  update: (oldObj, newObj) => {
    const before = oldObj.metadata?.generation;
    return before === undefined || before !== newObj.metadata?.generation;
  },
};

/** Updates pass when `metadata.labels` changed (no labels and `{}` are the same). */
export const labelsChanged: Predicate = {
  update: (oldObj, newObj) => !sameStringMap(oldObj.metadata?.labels, newObj.metadata?.labels),
};

/** Updates pass when `metadata.annotations` changed (no annotations and `{}` are the same). */
export const annotationsChanged: Predicate = {
  update: (oldObj, newObj) => !sameStringMap(oldObj.metadata?.annotations, newObj.metadata?.annotations),
};

/**
 * Drops updates that changed nothing but `.status`: the objects are compared without `status`,
 * `metadata.resourceVersion` and `metadata.managedFields` (both move with every write). Works for
 * objects without a generation (a Node's heartbeat, a Pod's phase), where {@link generationChanged}
 * cannot tell; unlike it, label, annotation, finalizer and deletion changes pass.
 */
export const ignoreStatusOnlyUpdates: Predicate = {
  update: (oldObj, newObj) => !isDeepStrictEqual(withoutStatus(oldObj), withoutStatus(newObj)),
};

/** Passes an event when every predicate does (none: all pass), stopping at the first that does not. */
export function and<T extends KubeObject>(...predicates: readonly Predicate<T>[]): Required<Predicate<T>> {
  return {
    create: (obj) => predicates.every((p) => p.create?.(obj) ?? true),
    update: (oldObj, newObj) => predicates.every((p) => p.update?.(oldObj, newObj) ?? true),
    delete: (obj, info) => predicates.every((p) => p.delete?.(obj, info) ?? true),
    resync: (obj) => predicates.every((p) => p.resync?.(obj) ?? true),
  };
}

/** Passes an event when any predicate does (none: nothing passes, as controller-runtime's `Or`). */
export function or<T extends KubeObject>(...predicates: readonly Predicate<T>[]): Required<Predicate<T>> {
  return {
    create: (obj) => predicates.some((p) => p.create?.(obj) ?? true),
    update: (oldObj, newObj) => predicates.some((p) => p.update?.(oldObj, newObj) ?? true),
    delete: (obj, info) => predicates.some((p) => p.delete?.(obj, info) ?? true),
    resync: (obj) => predicates.some((p) => p.resync?.(obj) ?? true),
  };
}

/**
 * Passes exactly the events `predicate` drops. An omitted function passes, so its negation drops:
 * `not(generationChanged)` drops every create, delete and resync.
 */
export function not<T extends KubeObject>(predicate: Predicate<T>): Required<Predicate<T>> {
  return {
    create: (obj) => !(predicate.create?.(obj) ?? true),
    update: (oldObj, newObj) => !(predicate.update?.(oldObj, newObj) ?? true),
    delete: (obj, info) => !(predicate.delete?.(obj, info) ?? true),
    resync: (obj) => !(predicate.resync?.(obj) ?? true),
  };
}

function sameStringMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  return isDeepStrictEqual(a ?? {}, b ?? {});
}

function withoutStatus(obj: KubeObject): KubeObject {
  const metadata = { ...obj.metadata };
  delete metadata.resourceVersion;
  delete metadata.managedFields;
  const compared: KubeObject & { status?: unknown } = { ...obj, metadata };
  delete compared.status;
  return compared;
}
