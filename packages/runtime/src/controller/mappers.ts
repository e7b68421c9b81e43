import { keyFor, type KubeObject } from '@loopwright/informer';

/** The API group of an `apiVersion` (`''` for the core group, e.g. `v1`). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * Maps an owned object to the key of its controller owner when that owner is of `kind` in `group`
 * (any version), as controller-runtime's `Owns()`/`EnqueueRequestForOwner(OnlyControllerOwner)`.
 * The owner is looked up in the owned object's namespace: ownership never crosses namespaces.
 */
export function enqueueControllerOwner(kind: string, group: string): (obj: KubeObject) => string[] {
  return (obj) => {
    const owner = obj.metadata?.ownerReferences?.find(
      (ref) => ref.controller === true && ref.kind === kind && groupOf(ref.apiVersion) === group,
    );
    return owner ? [keyFor(obj.metadata?.namespace, owner.name)] : [];
  };
}

/** Splits a `namespace/name` key (or a cluster-scoped `name`). */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: undefined, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
