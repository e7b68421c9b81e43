/**
 * @loopwright/envtest: a real Kubernetes control plane (kube-apiserver and etcd, built from their Go
 * modules) for integration tests, like controller-runtime's envtest. Tests get it through the global
 * setup (`--test-global-setup=../envtest/src/global-setup.ts`) and talk to it with the helpers below.
 * The Go programs of every test tool are pinned and built here, in one module (see tools/tools.ts).
 */
export {
  kubeconfigYaml,
  startControlPlane,
  type ControlPlane,
  type ControlPlaneOptions,
} from './controlplane/start.ts';
export { freeLoopbackPort } from './controlplane/ports.ts';
export { ManagedProcess } from './controlplane/process.ts';
export {
  ensureControlPlaneBinaries,
  pinnedVersions,
  type ControlPlaneBinaries,
} from './controlplane/binaries.ts';
export {
  ensureGoBuild,
  goBuildCacheDir,
  sharedUntilFailure,
  type GoBuildProgress,
} from './cached-go-build.ts';
export {
  ensureTestTools,
  pinnedTools,
  toolNames,
  type EnsureToolsOptions,
  type PinnedTools,
  type TestTools,
  type ToolName,
} from './tools/tools.ts';
export {
  createTestNamespace,
  eventually,
  loadTestKubeConfig,
  namespaces,
  type EventuallyOptions,
  type TestNamespace,
} from './kube.ts';
export {
  applyCrds,
  customResourceDefinitions,
  readCrdDirectory,
  readCrdFiles,
  sortedYamlFiles,
  type ApplyCrdsOptions,
  type Crd,
} from './crds.ts';
export { variablesRead } from './env-reads.ts';
export { writeSecretVolume } from './secret-volume.ts';
