/**
 * @loopwright/workqueue: client-go `util/workqueue` semantics for TypeScript controllers.
 * Create a queue with {@link newRateLimitingQueue}; see the README for exact semantics.
 */
export { newRateLimitingQueue } from './rate-limiting-queue.ts';
export type { RateLimitingQueue, RateLimitingQueueOptions } from './rate-limiting-queue.ts';
export type { DelayingQueue } from './delaying-queue.ts';
export type { QueueItem, WorkQueue } from './queue.ts';
export { LOW_PRIORITY, NORMAL_PRIORITY } from './priority.ts';
export type { Ordering } from './priority.ts';
export {
  bucketRateLimiter,
  defaultControllerRateLimiter,
  exponentialFailureRateLimiter,
  maxOfRateLimiter,
} from './rate-limiters.ts';
export type { BucketRateLimiterOptions, RateLimiter } from './rate-limiters.ts';
export type { WorkqueueMetricsProvider } from './metrics.ts';
