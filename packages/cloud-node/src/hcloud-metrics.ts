/** The `HcloudMetrics` hook of the API client, on a prom-client registry (the Manager's). */
import { HCLOUD_METRIC_NAMES, type HcloudMetrics } from '@loopwright/hcloud';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createHcloudMetrics(registry: Registry): HcloudMetrics {
  const requests = new Counter({
    name: HCLOUD_METRIC_NAMES.requests,
    help: 'Hetzner Cloud API requests (every attempt, retries included), by templated endpoint and HTTP status or error kind.',
    labelNames: ['endpoint', 'code'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: HCLOUD_METRIC_NAMES.requestDuration,
    help: 'Hetzner Cloud API request duration in seconds.',
    labelNames: ['endpoint', 'code'],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30],
    registers: [registry],
  });
  const remaining = new Gauge({
    name: HCLOUD_METRIC_NAMES.rateLimitRemaining,
    help: 'RateLimit-Remaining of the last Hetzner Cloud API response: requests left in the project bucket.',
    registers: [registry],
  });
  return {
    request: (endpoint, code, seconds) => {
      requests.inc({ endpoint, code });
      duration.observe({ endpoint, code }, seconds);
    },
    rateLimitRemaining: (n) => {
      remaining.set(n);
    },
  };
}
