export { createMetrics, type Metrics, type MetricsOptions } from './create-metrics.ts';
export { WORKQUEUE_DURATION_BUCKETS, type WorkqueueMetricsProvider } from './workqueue.ts';
export {
  RECONCILE_RESULTS,
  RECONCILE_TIME_BUCKETS,
  type ControllerReconcileMetrics,
  type ReconcileMetrics,
  type ReconcileOutcome,
  type ReconcileResult,
} from './reconcile.ts';
export type { LeaderElectionMetrics } from './leader-election.ts';
export { SHARD_HANDOFF_RESULTS, type ShardHandoffResult, type ShardingMetrics } from './sharding.ts';
export {
  REST_CLIENT_DURATION_BUCKETS,
  type RestClientMetrics,
  type RestClientRequest,
} from './rest-client.ts';
export {
  INFORMER_WATCH_ERROR_REASONS,
  type InformerMetrics,
  type InformerWatchErrorReason,
  type ResourceInformerMetrics,
} from './informer.ts';
export {
  HealthServerListenError,
  startHealthServer,
  type HealthCheck,
  type HealthServer,
  type HealthServerOptions,
} from './health-server.ts';
export { EVENT_DROP_CAUSES, type EventDropCause, type EventMetrics } from './events.ts';
