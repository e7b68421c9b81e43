export { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './controlplane/start.ts';
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
export { freeLoopbackPort } from './controlplane/ports.ts';
export { ensureGoBuild, type GoBuildProgress } from './cached-go-build.ts';
export {
  ensureTestTools,
  pinnedTools,
  toolNames,
  type EnsureToolsOptions,
  type PinnedTools,
  type TestTools,
  type ToolName,
} from './tools/tools.ts';
export { commandLineToolsDir } from './tools/command-line.ts';
export {
  ensureControlPlaneBinaries,
  pinnedVersions,
  type ControlPlaneBinaries,
} from './controlplane/binaries.ts';
export {
  createTestNamespace,
  eventually,
  loadTestKubeConfig,
  type EventuallyOptions,
  type TestNamespace,
} from './kube.ts';
export * from './hcloud/index.ts';
export * from './mailgun/index.ts';
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
export { applyCrds, readCrdDirectory, readCrdFiles, type ApplyCrdsOptions, type Crd } from './crds.ts';
export { variablesRead } from './env-reads.ts';
export { writeSecretVolume } from './secret-volume.ts';
export * from './images/index.ts';
export {
  controllerProgram,
  sortedYamlFiles,
  workspaceControllers,
  type WorkspaceController,
} from './workspace/controllers.ts';
export * from './prometheus/index.ts';
export * from './release/index.ts';
export { ensureReleaseTools, type ReleaseTools } from './tools/release-tools.ts';
