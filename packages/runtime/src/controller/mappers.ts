import { keyFor, type KubeObject } from '@loopwright/informer';

/** The API group of an `apiVersion` (`''` for the core group, e.g. `v1`). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * Maps an owned object to the key of its controller owner when that owner is of `kind` in `group`
 * (any version), as controller-runtime's `Owns()`/`EnqueueRequestForOwner(OnlyControllerOwner)`.
 * A namespaced owner is in the owned object's namespace (ownership never crosses namespaces); a
 * cluster-scoped owner (`namespaced` false) has no namespace, whatever the owned object's.
 */
export function enqueueControllerOwner(
  kind: string,
  group: string,
  namespaced = true,
): (obj: KubeObject) => string[] {
  return (obj) => {
    const owner = controllerOwnerOf(obj, kind, group);
    if (owner === undefined) return [];
    return [namespaced ? keyFor(obj.metadata?.namespace, owner.name) : owner.name];
  };
}

/** `obj`'s controller owner reference when it points at a `kind` in `group` (any version). */
export function controllerOwnerOf(
  obj: KubeObject,
  kind: string,
  group: string,
): { name: string; uid: string } | undefined {
  return obj.metadata?.ownerReferences?.find(
    (ref) => ref.controller === true && ref.kind === kind && groupOf(ref.apiVersion) === group,
  );
}

/** Splits a `namespace/name` key (or a cluster-scoped `name`). */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: undefined, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
