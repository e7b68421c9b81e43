/**
 * @loopwright/cloud-node: the Node and Node-lifecycle controllers of hcloud-cloud-controller-manager,
 * on the Loopwright runtime, with one shared server snapshot and a rate-limit budget.
 */
export { RequestBudget, type Priority, type RequestBudgetOptions } from './budget.ts';
export { program } from './config.ts';
export { createNodeApi, type NodeApi, type NodeApiOptions } from './api.ts';
export {
  createCloudNodeControllers,
  LIFECYCLE_CONTROLLER,
  NODE_CONTROLLER,
  type CloudNodeControllerOptions,
} from './controller.ts';
export { decideLifecycle, type LifecycleStep, type ServerState } from './decide-lifecycle.ts';
export {
  decideInitialisation,
  decideNode,
  decideRefresh,
  type InitialisationStep,
  type NodeMapping,
  type NodeStep,
  type RefreshStep,
} from './decide-node.ts';
export { createHcloudMetrics } from './hcloud-metrics.ts';
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
export { EventReason } from './reasons.ts';
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
