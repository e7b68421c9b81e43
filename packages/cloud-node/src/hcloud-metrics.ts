/**
 * The `HcloudMetrics` hook of the API client, on a prom-client registry (the Manager's). The request
 * counter has hcloud-go's name, help and labels (`code`, `method`, `api_endpoint`): HCCM exports it
 * through hcloud-go, so dashboards and alerts written for HCCM work unchanged.
 */
import { HCLOUD_METRIC_NAMES, HCLOUD_REQUEST_LABEL_NAMES, type HcloudMetrics } from '@loopwright/hcloud';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createHcloudMetrics(registry: Registry): HcloudMetrics {
  const requests = new Counter({
    name: HCLOUD_METRIC_NAMES.requests,
    help: 'A counter for requests to the hcloud api per endpoint.',
    labelNames: HCLOUD_REQUEST_LABEL_NAMES,
    registers: [registry],
  });
  // hcloud-go labels its histogram by `method` only; the same labels as the counter are a superset, so
  // its queries still work and per-endpoint latency stays visible.
  const duration = new Histogram({
    name: HCLOUD_METRIC_NAMES.requestDuration,
    help: 'Hetzner Cloud API request duration in seconds.',
    labelNames: HCLOUD_REQUEST_LABEL_NAMES,
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30],
    registers: [registry],
  });
  const remaining = new Gauge({
    name: HCLOUD_METRIC_NAMES.rateLimitRemaining,
    help: 'RateLimit-Remaining of the last Hetzner Cloud API response: requests left in the project bucket.',
    registers: [registry],
  });
  return {
    request: (labels, seconds) => {
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
    rateLimitRemaining: (n) => {
      remaining.set(n);
    },
  };
}
