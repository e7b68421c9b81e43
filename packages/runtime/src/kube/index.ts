export { ACCEPT_METADATA_ONLY, KubeClient, type KubeFetchInit } from './client.ts';
export {
  KubeConfigError,
  describeContext,
  loadKubeConfig,
  type KubeConfigSource,
  type KubeContextDescription,
  type LoadKubeConfigOptions,
} from './config.ts';
export {
  mergePatch,
  mergePatchStatus,
  resourcePath,
  type MergePatchOptions,
  type ResourceRef,
} from './patch.ts';
