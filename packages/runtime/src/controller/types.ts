import type { KubeObject, ListWatchScope } from '@loopwright/informer';
import type { Logger } from 'winston';

/** What one reconcile is asked to do: bring the object named by `key` to its desired state. */
export interface ReconcileRequest<T extends KubeObject> {
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  key: string;
  namespace: string | undefined;
  name: string;
  /**
   * The object as the cache holds it now, or undefined when it is gone (deleted, or never seen).
   * Shared with the cache: never mutate it; patch through the API instead.
   */
  object: T | undefined;
  /** Unique per reconcile; also on every line of `log`. */
  reconcileID: string;
  /** Carries `controller`, `namespace`, `name` and `reconcileID`. */
  log: Logger;
  /** Aborted when the manager shuts down; pass it to long calls. */
  signal: AbortSignal;
}

/**
 * What a reconcile asks of the queue, as controller-runtime's `reconcile.Result`:
 * nothing (done: the key's backoff is forgotten), `requeueAfterMs` (forget, then add after the delay:
 * e.g. wake up at a scheduled time), or `requeue: true` (add with the rate limiter's backoff).
 * Throwing means failure: the key is retried with backoff, unless the error is terminal.
 */
export type ReconcileResult = { requeueAfterMs?: number; requeue?: boolean } | undefined;

/** A reconcile function; one that returns nothing (`Promise<void>`) means success. */
export type Reconciler<T extends KubeObject> = (
  request: ReconcileRequest<T>,
) => Promise<ReconcileResult> | Promise<void>;

/** The primary resource of a controller: what its keys name. */
export interface PrimaryResource extends ListWatchScope {
  /** The resource's `kind`, used to recognise owner references that point at it. */
  kind: string;
}

/** A related resource whose events enqueue primary keys through `map`. */
export interface Watch<R extends KubeObject = KubeObject> {
  resource: ListWatchScope;
  /** The primary keys (`namespace/name`) an event on `obj` should reconcile. */
  map: (obj: R) => readonly string[];
}
