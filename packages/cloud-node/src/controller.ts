/**
 * The two controllers, as runtime Controllers over Nodes (keys = Node names), so both run only while
 * this replica holds the Lease and stop with it. Both watch only Nodes (`--node-selector` limits what
 * the informer lists and watches); periodic work is each reconcile's `requeueAfterMs`.
 *
 * - `cloud-node` (Node controller, `reconcile-node.ts`): initialises tainted Nodes, refreshes the
 *   `status.addresses` of initialised ones. Status-only updates are ignored: kubelet's status reports
 *   and its own address writes change nothing it decides on (the refresh is periodic).
 * - `cloud-node-lifecycle` (`reconcile-lifecycle.ts`): an update reconciles only when it changes the
 *   lifecycle decision (Ready, providerID, taints): a Node turning NotReady is checked at once, while
 *   kubelet's periodic status reports of an unchanged Node are not.
 */
import { isDeepStrictEqual } from 'node:util';
import { Controller, ignoreStatusOnlyUpdates, type Predicate } from '@loopwright/runtime';
import type { NodeApi } from './api.ts';
import { decideLifecycle } from './decide-lifecycle.ts';
import type { NodeMapping } from './decide-node.ts';
import { keepNodeFieldsRead, type Node } from './node.ts';
import { createLifecycleReconciler } from './reconcile-lifecycle.ts';
import { createNodeReconciler } from './reconcile-node.ts';

export interface CloudNodeControllerOptions extends NodeMapping {
  api: NodeApi;
  nodeMonitorPeriodMs: number;
  /** See `LifecycleReconcilerOptions`. Default 55 s. */
  notReadySweepPeriodMs?: number;
  nodeStatusUpdateFrequencyMs: number;
  /** Label selector limiting both controllers (the informer only sees matching Nodes). */
  nodeSelector?: string | undefined;
  /** Concurrent reconciles per controller. Default 16 (most wait on one shared sweep). */
  workers?: number;
  /** Unix ms. Default `Date.now`. */
  now?: () => number;
  /** First retry delay after a failed initialisation (doubling up to 5 min). Default 30 s. */
  initRetryMs?: number;
}

const NODES = { group: '', version: 'v1', plural: 'nodes', kind: 'Node' } as const;

export const NODE_CONTROLLER = 'cloud-node';
export const LIFECYCLE_CONTROLLER = 'cloud-node-lifecycle';

/**
 * Updates that change the lifecycle decision made without the server (which is all a Node's update can
 * change), or the Node's uid (deleted and registered again between two observations).
 */
export const lifecycleDecisionChanged: Predicate<Node> = {
  update: (oldNode, newNode) =>
    oldNode.metadata?.uid !== newNode.metadata?.uid ||
    !isDeepStrictEqual(decideLifecycle(oldNode), decideLifecycle(newNode)),
};

/**
 * The Nodes both controllers cache: those `nodeSelector` matches (all without one), with only the
 * fields they read. Whoever asks the informer factory for this scope shares their cache.
 */
export function nodeCacheScope(nodeSelector: string | undefined) {
  return {
    ...NODES,
    ...(nodeSelector ? { labelSelector: nodeSelector } : {}),
    transform: keepNodeFieldsRead,
  };
}

export function createCloudNodeControllers(
  options: CloudNodeControllerOptions,
): [Controller<Node>, Controller<Node>] {
  const nodes = nodeCacheScope(options.nodeSelector);
  const workers = options.workers ?? 16;
  return [
    new Controller<Node>({
      name: NODE_CONTROLLER,
      for: { ...nodes, predicate: ignoreStatusOnlyUpdates },
      maxConcurrentReconciles: workers,
      reconcile: createNodeReconciler(options),
    }),
    new Controller<Node>({
      name: LIFECYCLE_CONTROLLER,
      for: { ...nodes, predicate: lifecycleDecisionChanged },
      maxConcurrentReconciles: workers,
      reconcile: createLifecycleReconciler(options),
    }),
  ];
}
