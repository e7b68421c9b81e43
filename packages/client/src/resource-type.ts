/**
 * What a handle needs to know of a resource to build its REST paths: the only place a path to the API
 * server is written. `group` is `''` for the core API group (`/api/v1`), any other group is below
 * `/apis/<group>/<version>`.
 */
import type { ObjectKey } from './object.ts';

/** A resource, as a watch or a list names it: group, version and (lower-case, plural) resource. */
export interface GroupVersionResource {
  group: string;
  version: string;
  /** The resource (plural, lower case): `pods`, `ats`, `mailgunclusters`. */
  plural: string;
}

/** A resource and what its objects are: the argument of `KubeClient.resource()`. */
export interface ResourceType extends GroupVersionResource {
  /** The objects' kind (`Pod`): filled into list items, which the API server sends without it. */
  kind: string;
  /** Whether objects live in a namespace: a namespaced resource's key needs one to name an object. */
  namespaced: boolean;
}

/** `apiVersion` of the resource's objects: `v1`, `apps/v1`. */
export function apiVersionOf(type: GroupVersionResource): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** The `resource.group` name used in logs and metric labels, e.g. `configmaps`, `deployments.apps`. */
export function resourceName(type: GroupVersionResource): string {
  return type.group === '' ? type.plural : `${type.plural}.${type.group}`;
}

/**
 * The collection's path: every object of the resource (`namespace` undefined: across namespaces, or a
 * cluster-scoped resource), or those of one namespace.
 */
export function collectionPath(type: GroupVersionResource, namespace?: string): string {
  const base = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${base}${scope}/${type.plural}`;
}

/** One object's path, or one of its subresources' (`status`). */
export function objectPath(type: ResourceType, key: ObjectKey, subresource?: string): string {
  if (key.name === '') throw new TypeError(`${resourceName(type)}: an object key needs a name`);
  const namespace = scopeOf(type, key.namespace);
  const sub = subresource === undefined ? '' : `/${subresource}`;
  return `${collectionPath(type, namespace)}/${encodeURIComponent(key.name)}${sub}`;
}

/**
 * The namespace of a request on `type`: required for a namespaced resource's object, refused for a
 * cluster-scoped one, so a wrong key fails here with its reason instead of as a 404 from the server.
 */
export function scopeOf(type: ResourceType, namespace: string | undefined): string | undefined {
  if (type.namespaced && (namespace === undefined || namespace === '')) {
    throw new TypeError(`${resourceName(type)} is namespaced: the object key needs a namespace`);
  }
  if (!type.namespaced && namespace !== undefined && namespace !== '') {
    throw new TypeError(`${resourceName(type)} is cluster-scoped: the object key has no namespace`);
  }
  return type.namespaced ? namespace : undefined;
}
