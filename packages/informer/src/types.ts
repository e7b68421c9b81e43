import type { KubeStatus } from '@loopwright/client';

/**
 * The minimal shape of a Kubernetes object that the informer relies on. Everything else is carried
 * through untouched: objects are the API server's JSON, not class instances.
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/**
 * The standard `metadata` fields controllers read: the informer itself uses name, namespace, uid,
 * resourceVersion, labels and ownerReferences. No index signature, so @kubernetes/client-node's model
 * classes (V1Pod, V1ConfigMap...) fit as `T`.
 */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  annotations?: Record<string, string>;
  generation?: number;
  finalizers?: string[];
  /** RFC 3339 strings as the informer delivers them (client-node's model classes hold a `Date`). */
  creationTimestamp?: string | Date;
  deletionTimestamp?: string | Date;
  /** Server-side apply bookkeeping; see {@link stripManagedFields}. */
  managedFields?: unknown[];
}

/** One entry of `metadata.ownerReferences`. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The resource an informer lists and watches. `group` is `''` for the core API group. */
export interface ResourceRef {
  group: string;
  version: string;
  /** The lower-case plural resource name, e.g. `configmaps`. */
  plural: string;
}

/** A resource plus the scope of one list/watch: the unit of sharing in the factory. */
export interface ListWatchScope extends ResourceRef {
  /** Watch one namespace; omitted = all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** A decoded watch event as the API server sends it (one JSON document per line). */
export type WatchEvent<T extends KubeObject> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; object: KubeObject }
  | { type: 'ERROR'; object: KubeStatus };

/**
 * Structured log sink. Compatible with winston and console-like loggers; fields never contain
 * credentials (request headers are never logged).
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Structural metric hooks; wire them to counters in @loopwright/metrics. Must not throw. */
export interface InformerMetrics {
  /**
   * The reflector for `resource` started, before its first list: a place to create the resource's
   * series at zero, so a rate over them sees the first failure too.
   */
  started?(resource: string): void;
  /** A list or watch attempt failed; `reason` is a {@link FailureReason}. */
  watchError?(resource: string, reason: string): void;
  /**
   * A full relist is due: the watch's resourceVersion expired (410 Gone), or the resource went missing
   * after a list had succeeded (404 NotFound, its CRD deleted). Once per relist, not per list attempt.
   */
  relist?(resource: string): void;
}

/** A logger that drops everything except warnings and errors, which go to stderr. */
export const consoleLogger: Logger = {
  debug: () => undefined,
  warn: (message, fields) => {
    console.warn(message, fields ?? {});
  },
  error: (message, fields) => {
    console.error(message, fields ?? {});
  },
};

/** The `resource.group` name used in logs and metric labels, e.g. `configmaps`, `deployments.apps`. */
export function resourceName(ref: ResourceRef): string {
  return ref.group === '' ? ref.plural : `${ref.plural}.${ref.group}`;
}

/** The kind of a list's items, `Pod` of `PodList`: the API server leaves it out of each item. */
export function itemKindOf(listKind: string | undefined): string | undefined {
  return listKind?.endsWith('List') === true ? listKind.slice(0, -'List'.length) : undefined;
}
