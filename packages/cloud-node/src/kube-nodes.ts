/** Node writes: conflict-safe merge patches, the status subresource, and guarded deletes. */
import { isConflict, isNotFound, mergePatch, mergePatchStatus, type KubeClient } from '@loopwright/runtime';
import type { Node } from './node.ts';

export interface NodeApi {
  get(name: string, signal?: AbortSignal): Promise<Node>;
  /** Merge patch conditional on `resourceVersion` (409 Conflict when stale). */
  patch(
    name: string,
    patch: Record<string, unknown>,
    resourceVersion: string | undefined,
    signal?: AbortSignal,
  ): Promise<Node>;
  patchStatus(name: string, patch: Record<string, unknown>, signal?: AbortSignal): Promise<Node>;
  /** Deletes only the Node with this uid and resourceVersion; `false` if it was already gone. */
  delete(
    name: string,
    preconditions: { uid?: string; resourceVersion?: string },
    signal?: AbortSignal,
  ): Promise<boolean>;
}

const ref = (name: string): { group: string; version: string; plural: string; name: string } => ({
  group: '',
  version: 'v1',
  plural: 'nodes',
  name,
});

export function kubeNodeApi(client: KubeClient): NodeApi {
  return {
    get: (name, signal) =>
      client.requestJson<Node>('GET', `/api/v1/nodes/${encodeURIComponent(name)}`, signal ? { signal } : {}),
    patch: (name, patch, resourceVersion, signal) =>
      mergePatch<Node>(client, ref(name), patch, {
        ...(resourceVersion ? { resourceVersion } : {}),
        ...(signal ? { signal } : {}),
      }),
    patchStatus: (name, patch, signal) =>
      mergePatchStatus<Node>(client, ref(name), patch, signal ? { signal } : {}),
    delete: async (name, preconditions, signal) => {
      try {
        await client.requestJson('DELETE', `/api/v1/nodes/${encodeURIComponent(name)}`, {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions },
          ...(signal ? { signal } : {}),
        });
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
    },
  };
}

/**
 * client-go's `RetryOnConflict` for merge patches that replace lists (taints): `mutate` computes the patch
 * from a Node (first the cached one, after a conflict a freshly read one) or returns `undefined` when
 * nothing is left to do. The patch carries the Node's resourceVersion, so a concurrent change (kubelet,
 * another controller) is never overwritten. Resolves with the patched Node, or `undefined` if none was needed.
 */
export async function patchNodeRetryingConflicts(
  api: NodeApi,
  cached: Node,
  mutate: (node: Node) => Record<string, unknown> | undefined,
  signal?: AbortSignal,
  attempts = 5,
): Promise<Node | undefined> {
  let node = cached;
  const name = node.metadata?.name ?? '';
  for (let attempt = 1; ; attempt++) {
    const patch = mutate(node);
    if (patch === undefined) return undefined;
    try {
      return await api.patch(name, patch, node.metadata?.resourceVersion, signal);
    } catch (error) {
      if (!isConflict(error) || attempt >= attempts) throw error;
    }
    node = await api.get(name, signal);
  }
}
