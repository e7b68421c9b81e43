export { realClock, type Clock } from './clock.ts';
export {
  KubeClient,
  type KubeClientOptions,
  type KubeClientStats,
  type KubeFetchInit,
  type RateLimiterWaitObservation,
  type RestClientObserver,
  type RestRequestObservation,
} from './client.ts';
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
export { TokenBucket, type TokenBucketOptions } from './token-bucket.ts';
