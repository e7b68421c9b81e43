/**
 * client-go's `RetryOnConflict` for the Node merge patches that replace lists (taints): a list in a merge
 * patch replaces the whole list, so the patch must be computed from the Node it applies to and carry its
 * resourceVersion; a concurrent change (kubelet, another controller) is then a 409, never overwritten.
 */
import { isConflict } from '@loopwright/runtime';
import type { NodeApi } from './api.ts';
import { nodeName, type Node } from './node.ts';

/** client-go's `retry.DefaultRetry.Steps`. */
const ATTEMPTS = 5;

/**
 * `mutate` computes the patch from a Node (first the cached one, after a conflict a freshly read one),
 * or returns `undefined` when that Node needs none. Resolves with the patched Node, or `undefined` when
 * no patch was needed; rethrows anything but a conflict, and the last conflict.
 */
export async function patchRetryingConflicts(
  api: Pick<NodeApi, 'getNode' | 'patchNode'>,
  cached: Node,
  mutate: (node: Node) => Record<string, unknown> | undefined,
  signal?: AbortSignal,
): Promise<Node | undefined> {
  const name = nodeName(cached);
  let node = cached;
  for (let attempt = 1; ; attempt++) {
    const patch = mutate(node);
    if (patch === undefined) return undefined;
    try {
      return await api.patchNode(name, patch, node.metadata?.resourceVersion, signal);
    } catch (error) {
      if (!isConflict(error) || attempt >= ATTEMPTS) throw error;
    }
    node = await api.getNode(name, signal);
  }
}
