/**
 * @loopwright/client: the one way to the API server. A {@link KubeClient} gives a typed
 * {@link Resource} handle per resource; under it, one transport (credentials, connection pool, client-side
 * rate limit, REST metrics), one API error type, the paths, and protobuf for built-in kinds.
 */
export { KubeClient, type KubeClientOptions, type KubeFetchInit } from './client.ts';
export {
  Resource,
  type CallOptions,
  type DeleteOptions,
  type EncodingOption,
  type JsonPatchOperation,
  type ListOptions,
  type NoAnswer,
  type Patch,
  type PatchOptions,
  type TextOptions,
  type ProtobufCodec,
  type WatchOptions,
  type WriteOptions,
} from './resource.ts';
export { apiVersionOf, resourceName, type GroupVersionResource, type ResourceType } from './resource-type.ts';
export {
  itemKindOf,
  type KubeObject,
  type ListPage,
  type ObjectKey,
  type ObjectMeta,
  type OwnerReference,
  type WatchEvent,
} from './object.ts';
export {
  KubeConfigError,
  describeContext,
  loadKubeConfig,
  type KubeConfigSource,
  type KubeContextDescription,
  type LoadKubeConfigOptions,
} from './kubeconfig.ts';
export {
  KubeApiError,
  KubeApiFailure,
  toKubeApiError,
  type KubeApiErrorFields,
  type KubeRequestLine,
  type KubeStatus,
  type KubeStatusCause,
  type KubeStatusDetails,
} from './api-error.ts';
export {
  StatusReason,
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isForbidden,
  isGone,
  isInternalError,
  isInvalid,
  isNotFound,
  isServerTimeout,
  isServiceUnavailable,
  isTimeout,
  isTooManyRequests,
  isUnauthorized,
} from './classify.ts';
export { TokenBucket, type RequestPriority, type TokenBucketOptions } from './token-bucket.ts';
export {
  appended,
  BinaryReader,
  PROTOBUF_MEDIA_TYPE,
  WireType,
  decodeStatus,
  readFields,
  readInt64,
  readMessage,
  readStringField,
  readStringMapEntry,
  readTime,
  unwrapObject,
  type ProtobufObject,
  type StringFields,
} from './protobuf.ts';
export {
  decodeListPage,
  decodeWatchEvent,
  readObjectMeta,
  type ProtobufDecoder,
} from './protobuf-list-watch.ts';
export { encodeObject, type FieldEncoding, type MessageSchema } from './protobuf-encode.ts';
export {
  MAGIC,
  MAP_ENTRY,
  coreV1Fields,
  metaV1Fields,
  resourceFields,
  runtimeFields,
} from './proto-fields.ts';
export { REAPPLY_MS } from './applied-config.ts';
export { KubeTransport } from './transport.ts';
export type {
  KubeRequest,
  KubeResponse,
  KubeTransportOptions,
  KubeTransportStats,
  KubeWatchRequest,
  RateLimiterWaitObservation,
  RestClientObserver,
  RestRequestObservation,
} from './kube-request.ts';
