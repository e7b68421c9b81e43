/** What the manager needs to know about a cache that has not synced yet. */
export interface PendingCache {
  /** `resource.group`, for the timeout's message. */
  readonly resource: string;
  /** The API server does not serve the resource (e.g. its CRD is not installed). */
  readonly resourceMissing: boolean;
}

/**
 * Whether the cache-sync timeout ends start-up, given the caches still not synced when it fires.
 *
 * A cache waiting for a resource that is not served does not count: a restart cannot install a CRD,
 * and a crash loop would only add CrashLoopBackOff's delay (up to 5 min) once it is installed. Such a
 * manager stays up and unready, its informers retry with backoff and sync on their own. Any other
 * reason (RBAC, an unreachable or failing API server, a list slower than the timeout) still fails
 * start-up, as controller-runtime's `CacheSyncTimeout` does.
 */
export function cacheSyncTimeoutApplies(pending: readonly PendingCache[]): boolean {
  return pending.some((cache) => !cache.resourceMissing);
}
