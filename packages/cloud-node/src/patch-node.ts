/**
 * A Node merge patch that replaces a list (the taints): a list in a merge patch replaces the whole list,
 * so the patch is computed from the Node it applies to and carries that Node's resourceVersion; a
 * concurrent change (kubelet, another controller) is then a 409 Conflict, never overwritten, and the
 * patch is computed again from a fresh read (the runtime's `retryOnConflict`: client-go's DefaultRetry).
 */
import { retryOnConflict } from '@loopwright/runtime';
import type { NodeApi } from './api.ts';
import { nodeName, type Node } from './node.ts';

/**
 * `mutate` computes the patch from a Node (first the cached one, after a conflict a freshly read one),
 * or returns `undefined` when that Node needs none. Resolves with the patched Node, or `undefined` when
 * no patch was needed; rethrows anything but a conflict, and the last conflict.
 */
export function patchNodeFromLatest(
  api: Pick<NodeApi, 'getNode' | 'patchNode'>,
  cached: Node,
  mutate: (node: Node) => Record<string, unknown> | undefined,
  signal?: AbortSignal,
): Promise<Node | undefined> {
  const name = nodeName(cached);
  let node: Node | undefined;
  return retryOnConflict(
    async () => {
      // Every attempt after the first follows a conflict: the cached Node is stale, read it anew.
      node = node === undefined ? cached : await api.getNode(name, signal);
      const patch = mutate(node);
      return patch === undefined
        ? undefined
        : api.patchNode(name, patch, node.metadata?.resourceVersion, signal);
    },
    { signal },
  );
}
