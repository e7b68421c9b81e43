import { Registry, collectDefaultMetrics } from 'prom-client';
import { createEventMetrics, type EventMetrics } from './events.ts';
import { createInformerMetrics, type InformerMetrics } from './informer.ts';
import { createLeaderElectionMetrics, type LeaderElectionMetrics } from './leader-election.ts';
import { createReconcileMetrics, type ReconcileMetrics } from './reconcile.ts';
import { createRestClientMetrics, type RestClientMetrics } from './rest-client.ts';
import { createWorkqueueMetricsProvider, type WorkqueueMetricsProvider } from './workqueue.ts';

export interface MetricsOptions {
  /** Register prom-client's process_* and nodejs_* metrics. Default true; tests may turn it off. */
  defaultMetrics?: boolean;
}

export interface Metrics {
  /** Holds every family below; serve it with `startHealthServer`. Add your own metrics to it. */
  registry: Registry;
  workqueueProvider: WorkqueueMetricsProvider;
  reconcile: ReconcileMetrics;
  leaderElection: LeaderElectionMetrics;
  restClient: RestClientMetrics;
  informer: InformerMetrics;
  events: EventMetrics;
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
 * families. Create one per process: default metrics start an event-loop-delay monitor and a GC observer
 * that live as long as the process.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  }
  return {
    registry,
    workqueueProvider: createWorkqueueMetricsProvider(registry),
    reconcile: createReconcileMetrics(registry),
    leaderElection: createLeaderElectionMetrics(registry),
    restClient: createRestClientMetrics(registry),
    informer: createInformerMetrics(registry),
    events: createEventMetrics(registry),
  };
}
