/**
 * @loopwright/core: the primitives the other packages share, so there is one of each.
 * It depends on nothing of ours; everything else may depend on it.
 */
export { realClock, sleep } from './clock.ts';
export type { Clock, Timer, TimerOptions } from './clock.ts';
export { FakeClock, settle } from './fake-clock.ts';
export type { FakeClockOptions } from './fake-clock.ts';
export { Backoff, BackoffManager, jitter } from './backoff.ts';
export type { BackoffManagerOptions, BackoffOptions } from './backoff.ts';
export {
  KubeApiError,
  KubeApiFailure,
  toKubeApiError,
  type KubeApiErrorFields,
  type KubeRequestLine,
  type KubeStatus,
  type KubeStatusCause,
  type KubeStatusDetails,
} from './kube/api-error.ts';
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
} from './kube/classify.ts';
export { TokenBucket, type RequestPriority, type TokenBucketOptions } from './kube/token-bucket.ts';
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
} from './kube/protobuf.ts';
export { encodeObject, type FieldEncoding, type MessageSchema } from './kube/protobuf-encode.ts';
export { REAPPLY_MS } from './kube/applied-config.ts';
export {
  KubeTransport,
  type KubeRequest,
  type KubeResponse,
  type KubeTransportOptions,
  type KubeTransportStats,
  type KubeWatchRequest,
  type RateLimiterWaitObservation,
  type RestClientObserver,
  type RestRequestObservation,
} from './kube/transport.ts';
