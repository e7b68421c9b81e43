import { Registry, collectDefaultMetrics } from 'prom-client';
import { createEventMetrics, type EventMetrics } from './events.ts';
import { createHeapAfterGcMetric } from './heap-after-gc.ts';
import { createInformerMetrics, type InformerMetrics } from './informer.ts';
import { createLeaderElectionMetrics, type LeaderElectionMetrics } from './leader-election.ts';
import { createReconcileMetrics, type ReconcileMetrics } from './reconcile.ts';
import { createRestClientMetrics, type RestClientMetrics } from './rest-client.ts';
import { createShardingMetrics, type ShardingMetrics } from './sharding.ts';
import { createWorkqueueMetricsProvider, type WorkqueueMetricsProvider } from './workqueue.ts';

export interface MetricsOptions {
  /**
   * Register prom-client's process_* and nodejs_* metrics, and `nodejs_heap_used_after_gc_bytes`.
   * Default true; tests may turn it off.
   */
  defaultMetrics?: boolean;
}

export interface Metrics {
  /** Holds every family below; serve it with `startHealthServer`. Add your own metrics to it. */
  registry: Registry;
  workqueueProvider: WorkqueueMetricsProvider;
  reconcile: ReconcileMetrics;
  leaderElection: LeaderElectionMetrics;
  sharding: ShardingMetrics;
  restClient: RestClientMetrics;
  informer: InformerMetrics;
  events: EventMetrics;
  /**
   * Stops the GC observer behind `nodejs_heap_used_after_gc_bytes` (its gauge keeps its last value).
   * prom-client's own defaults have no way to stop and live on; none of them keeps the process alive.
   * Idempotent.
   */
  close(): void;
}

/**
 * prom-client exports these gauges with a `_total` suffix, which Prometheus reserves for counters:
 * `promtool check metrics` rejects them. Each is the sum over the `type` label of the same name
 * without the suffix (`sum(nodejs_active_handles)`), so nothing is lost by dropping them.
 */
const GAUGES_NAMED_LIKE_COUNTERS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/**
 * Creates a fresh registry (never prom-client's global one) with the standard controller metric
 * families. Create one per process: default metrics start an event-loop-delay monitor and GC observers
 * (prom-client's live as long as the process; `close()` stops ours).
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  let heapAfterGc: { close(): void } | undefined;
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
    heapAfterGc = createHeapAfterGcMetric(registry);
  }
  return {
    registry,
    workqueueProvider: createWorkqueueMetricsProvider(registry),
    reconcile: createReconcileMetrics(registry),
    leaderElection: createLeaderElectionMetrics(registry),
    sharding: createShardingMetrics(registry),
    restClient: createRestClientMetrics(registry),
    informer: createInformerMetrics(registry),
    events: createEventMetrics(registry),
    close() {
      heapAfterGc?.close();
    },
  };
}
