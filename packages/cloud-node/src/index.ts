/**
 * @loopwright/cloud-node: the Node and Node-lifecycle controllers of hcloud-cloud-controller-manager,
 * on the Loopwright runtime, with one shared server snapshot and a rate-limit budget.
 */
export { RequestBudget, type Priority, type RequestBudgetOptions } from './budget.ts';
export { program } from './config.ts';
export {
  createCloudNodeControllers,
  LIFECYCLE_CONTROLLER,
  NODE_CONTROLLER,
  type CloudNodeControllerOptions,
} from './controllers.ts';
export { createHcloudMetrics } from './hcloud-metrics.ts';
export { kubeNodeApi, patchNodeRetryingConflicts, type NodeApi } from './kube-nodes.ts';
export {
  decideLifecycle,
  planLifecycle,
  type LifecycleAction,
  type LifecyclePlan,
  type ServerState,
} from './lifecycle-decision.ts';
export * from './names.ts';
export type { Node, NodeCondition, Taint } from './node.ts';
export {
  applyProvidedNodeIp,
  serverAddresses,
  serverLabels,
  zoneForLocation,
  type AddressFamily,
  type NodeAddress,
} from './node-mapping.ts';
export { formatProviderId, parseProviderId, type ProviderId } from './provider-id.ts';
export {
  ServerDirectory,
  type Lookup,
  type NotNowCause,
  type LookupOptions,
  type ServerDirectoryOptions,
  type ServerRef,
  type Snapshot,
  type SnapshotResult,
} from './server-directory.ts';
