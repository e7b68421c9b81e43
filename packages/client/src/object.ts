/**
 * The shapes every Kubernetes object shares, as the client reads and writes them: the API server's JSON,
 * not class instances. Everything a handle does not need is carried through untouched.
 */
import type { KubeStatus } from './api-error.ts';

/** The minimal shape of a Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/**
 * The standard `metadata` fields controllers read. No index signature, so @kubernetes/client-node's
 * model classes (V1Pod, V1ConfigMap...) fit as `K`.
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
  /** RFC 3339 strings as the API server sends them (client-node's model classes hold a `Date`). */
  creationTimestamp?: string | Date;
  deletionTimestamp?: string | Date;
  /** Server-side apply bookkeeping. */
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

/** A decoded watch event as the API server sends it. */
export type WatchEvent<K extends KubeObject> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: K }
  | { type: 'BOOKMARK'; object: KubeObject }
  | { type: 'ERROR'; object: KubeStatus };

/** One page of a list: its items (`apiVersion`/`kind` filled in as the list's) and where it stands. */
export interface ListPage<K extends KubeObject> {
  items: K[];
  /** The list's resourceVersion: watch from here. */
  resourceVersion: string;
  /** The continue token of the next page; `''` on the last page. */
  continue: string;
  /**
   * The shard selector the API server applied (`metadata.shardInfo.selector`): the page holds only the
   * objects whose hash falls in its ranges. Absent when the page is the whole collection, which is
   * also what a server without the ShardedListAndWatch feature answers to a `shardSelector`: it ignores
   * the parameter.
   */
  shardSelector?: string;
}

/** Names one object: `namespace` is omitted for a cluster-scoped resource. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

/** The kind of a list's items, `Pod` of `PodList`: the API server leaves it out of each item. */
export function itemKindOf(listKind: string | undefined): string | undefined {
  return listKind?.endsWith('List') === true ? listKind.slice(0, -'List'.length) : undefined;
}
