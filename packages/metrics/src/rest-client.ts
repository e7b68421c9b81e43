import { Counter, Histogram, type Registry } from 'prom-client';

/** client-go's `rest_client_request_duration_seconds` buckets. */
export const REST_CLIENT_DURATION_BUCKETS: readonly number[] = [
  0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60,
];

export interface RestClientRequest {
  /** HTTP method, upper case as sent (`GET`, `PATCH`...): the `method` and `verb` labels. */
  method: string;
  /** `host[:port]` of the API server (URL.host): never a path, to keep cardinality bounded. */
  host: string;
  /** HTTP status of the response; undefined when no response arrived (network error, timeout, abort). */
  statusCode: number | undefined;
  /** From sending the request until the response (or the failure), in seconds. */
  durationSeconds: number;
}

export interface RestClientMetrics {
  /**
   * Counts one request in `rest_client_requests_total{code,method,host}` (code `<error>` when no
   * response arrived, as client-go does) and observes it in `rest_client_request_duration_seconds`.
   */
  observeRequest(request: RestClientRequest): void;
}

export function createRestClientMetrics(registry: Registry): RestClientMetrics {
  const requests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb, and host.',
    buckets: [...REST_CLIENT_DURATION_BUCKETS],
    labelNames: ['verb', 'host'] as const,
    registers: [registry],
  });
  return {
    observeRequest({ method, host, statusCode, durationSeconds }) {
      const code = statusCode === undefined ? '<error>' : String(statusCode);
      requests.inc({ code, method, host });
      duration.observe({ verb: method, host }, durationSeconds);
    },
  };
}
