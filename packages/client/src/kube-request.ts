/**
 * What goes through a `KubeTransport`: a request, a watch, the response, the transport's options, and
 * what it reports to an observer (the `rest_client_*` metrics).
 */
import type http from 'node:http';
import type { Clock } from '@loopwright/core';
import type { RequestPriority } from './token-bucket.ts';

/** One request to the API server. */
export interface KubeRequest {
  /** Default `GET`. */
  method?: string;
  /** Below the server's URL, starting with `/`, query included: `/api/v1/namespaces/x/pods?limit=500`. */
  path: string;
  /** Sent as given, after `User-Agent` and before the KubeConfig's credentials. */
  headers?: Record<string, string>;
  /** Text (JSON) or bytes (protobuf), sent as given with the `Content-Type` the headers name. */
  body?: string | Uint8Array;
  /** Aborting it fails the request with a {@link KubeApiError} whose `failure` is `aborted`. */
  signal?: AbortSignal;
  /**
   * Deadline of the whole request, from the moment it first has its rate-limiter token (and, at
   * `background` priority, its quiet) until its last byte, retries included; then it fails with
   * `failure` `timeout`. As client-go's `Request.Timeout`, which throttles the first try before its
   * timeout starts: a throttled client must not time out requests it never sent. Default: none.
   */
  timeoutMs?: number;
  /**
   * Its place among requests waiting for a rate-limiter token. Default `normal`. A `background` request
   * is moreover sent only once the transport is quiet (see `background-priority.ts`): a diagnostic
   * then competes with reconciles for the server only when they never pause.
   */
  priority?: RequestPriority;
}

/** A streaming request: a watch. It takes no rate-limiter token (client-go does not rate-limit watches). */
export interface KubeWatchRequest extends KubeRequest {
  /**
   * If nothing at all arrives for this long (not even part of a line) once the request is sent,
   * response headers included, the connection is considered dead and the watch fails with `failure`
   * `timeout`. A half-open connection would otherwise hang forever. Each attempt of a request sent again
   * after `Retry-After` has its own wait; the wait to send it again does not count. Default: none.
   */
  idleTimeoutMs?: number;
  /**
   * Ask for protobuf (`application/vnd.kubernetes.protobuf`) and yield each frame's bytes, one
   * `metav1.WatchEvent` message each (see `protobuf.ts`), instead of each line's JSON. Built-in
   * kinds only: the API server refuses it for custom resources (406).
   */
  protobuf?: boolean;
  /**
   * Yield the body as text, as it arrives (a pod's log followed), instead of each line's JSON. Whatever
   * the chunking, no character is split between two pieces.
   */
  text?: boolean;
}

/** A response read to its end: a 2xx one, except from {@link KubeTransport.send}. */
export interface KubeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request, reported when its response headers arrive or it fails; a watch counts once, at its start. */
export interface RestRequestObservation {
  /** HTTP method as sent (`GET`, `PATCH`...): the `method` and `verb` labels. */
  method: string;
  /** `host[:port]` of the API server: never a path, so label cardinality stays bounded. */
  host: string;
  /** URL path of the request, without the query. */
  path: string;
  /** HTTP status; undefined when no response arrived (network error, timeout, abort): client-go's `<error>`. */
  statusCode: number | undefined;
  /** From handing the request to the network until the response headers (or the failure); excludes the limiter wait. */
  durationSeconds: number;
}

/** How long one request waited for a rate-limiter token (client-go's `rest_client_rate_limiter_duration_seconds`). */
export interface RateLimiterWaitObservation {
  method: string;
  host: string;
  durationSeconds: number;
}

/**
 * Receives request outcomes. Structural, so `metrics.restClient` from `@loopwright/metrics` plugs in
 * directly. Its exceptions are ignored: metrics must never fail a request.
 */
export interface RestClientObserver {
  observeRequest(request: RestRequestObservation): void;
  observeRateLimiterWait?(wait: RateLimiterWaitObservation): void;
}

export interface KubeTransportOptions {
  /**
   * Client-side rate limit, client-go's `rest.Config.QPS`/`Burst` (a token bucket, see
   * `TokenBucket`). Default 20 qps, burst 30: controller-runtime's defaults. `false`: no limit.
   */
  rateLimit?: { qps: number; burst: number } | false;
  observer?: RestClientObserver;
  /** Sent as `User-Agent` unless a request sets its own. Default `loopwright`. */
  userAgent?: string;
  /** Times the rate limiter, deadlines and idle timeouts. Default the real clock. */
  clock?: Clock;
}

/** Totals since the transport was created, for benchmarks and tests. */
export interface KubeTransportStats {
  /** Requests sent (including failed ones; not those aborted while waiting for a token). */
  requests: number;
  /** Requests that had to wait for a rate-limiter token. */
  throttledRequests: number;
  /** Sum of all rate-limiter waits, in seconds. */
  rateLimiterWaitSeconds: number;
}
