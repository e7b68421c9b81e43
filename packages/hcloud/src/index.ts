export {
  HcloudClient,
  DEFAULT_ENDPOINT,
  type CallOptions,
  type HcloudClientOptions,
  type ListServersOptions,
} from './client.ts';
export {
  HcloudError,
  isNotFound,
  isRateLimited,
  isRetryable,
  isUnauthorized,
  type HcloudErrorCode,
  type HcloudErrorInit,
} from './errors.ts';
export {
  SERVER_STATUSES,
  type Location,
  type Network,
  type Server,
  type ServerPrivateNet,
  type ServerPublicNet,
  type ServerStatus,
} from './models.ts';
export { httpGet, type HttpGet, type HttpGetInit, type HttpGetResponse } from './http-get.ts';
export {
  HCLOUD_METRIC_NAMES,
  HCLOUD_REQUEST_LABEL_NAMES,
  type HcloudLogger,
  type HcloudMetrics,
  type HcloudRequestLabels,
} from './observability.ts';
export { parseRateLimit, rateLimitWaitMs, type RateLimitState } from './rate-limit.ts';
