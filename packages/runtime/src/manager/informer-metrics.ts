import type { FailureReason, InformerMetrics as InformerHook } from '@loopwright/informer';
import type { InformerMetrics, InformerWatchErrorReason } from '@loopwright/metrics';

/** The informer's fine-grained failure reasons, folded into the metric's bounded label set. */
const metricReason: Record<FailureReason, InformerWatchErrorReason> = {
  gone: 'expired',
  not_found: 'client_error',
  network: 'network',
  timeout: 'timeout',
  inactivity: 'timeout',
  short_watch: 'network',
  throttled: 'throttled',
  unauthorized: 'client_error',
  forbidden: 'client_error',
  http_error: 'client_error',
  server_error: 'server_error',
  decode: 'other',
  internal: 'other',
};

/** Connects the informer's metric hook to the `loopwright_informer_*` families. */
export function informerMetricsHook(metrics: InformerMetrics): InformerHook {
  return {
    // Every informer's series exist from its start, so `increase()` over them sees the first failure.
    started: (resource) => {
      metrics.forResource(resource);
    },
    watchError: (resource, reason) => {
      metrics
        .forResource(resource)
        .watchError(Object.hasOwn(metricReason, reason) ? metricReason[reason as FailureReason] : 'other');
    },
    relist: (resource) => {
      metrics.forResource(resource).relisted();
    },
  };
}
