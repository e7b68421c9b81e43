/**
 * @loopwright/cluster: the toolkit for end-to-end tests and the demo: a real single-node cluster (node,
 * containerd, kubelet), images built without a daemon, a local OCI registry, helm, Cluster API,
 * Prometheus and the release tooling; `pnpm controlplane` and `pnpm cluster` run src/cli.ts. Its control
 * plane and test tools come from @loopwright/envtest.
 */
export { startCluster, type Cluster, type ClusterOptions } from './node/cluster.ts';
export { NodeUnavailableError } from './node/requirements.ts';
export { loadImagesIntoNode, type NodeImagesOptions } from './node/node-images.ts';
export {
  PodLogReadError,
  TIMESTAMPED_LOG_QUERY,
  TimestampedLogReader,
  readTimestampedLog,
} from './node/pod-log.ts';
export { findTestNode, loadTestNode, testNodeExports, testNodeOf, type TestNode } from './node/test-node.ts';
export { backgroundStatePath, readBackgroundState } from './node/background-state.ts';
export { commandLineToolsDir } from './tools/command-line.ts';
export * from './helm/index.ts';
export {
  CLUSTER_API_FIELD_MANAGER,
  startClusterApi,
  type ClusterApi,
  type ClusterApiOptions,
} from './cluster-api/start.ts';
export {
  prepareClusterctlManagement,
  type ClusterctlManagement,
} from './cluster-api/clusterctl-management.ts';
export * from './images/index.ts';
export {
  controllerProgram,
  workspaceControllers,
  type WorkspaceController,
} from './workspace/controllers.ts';
export * from './prometheus/index.ts';
export * from './release/index.ts';
export { ensureReleaseTools, type ReleaseTools } from './tools/release-tools.ts';
