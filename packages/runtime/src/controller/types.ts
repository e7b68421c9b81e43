import type { InformerRequest, KubeObject, ListWatchScope } from '@loopwright/informer';
import type { Logger } from 'winston';
import type { StatusWriter } from '../writes/status-writer.ts';
import type { Predicate } from './predicates.ts';

/** What one reconcile is asked to do: bring the object named by `key` to its desired state. */
export interface ReconcileRequest<T extends KubeObject> {
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  key: string;
  namespace: string | undefined;
  name: string;
  /**
   * The object as the cache holds it now, or undefined when it is gone (deleted, or never seen); while
   * the cache still holds a version that a write through {@link status} replaced, the written object.
   * Shared with the cache: never mutate it; patch through the API instead.
   */
  object: T | undefined;
  /**
   * Writes this object's status, remembered by the controller: the next reconcile reads what was
   * written even before the cache shows it, and the write's own watch event does not reconcile again.
   */
  status: StatusWriter<T>;
  /** Unique per reconcile; also on every line of `log`. */
  reconcileID: string;
  /** Carries `controller`, `namespace`, `name` and `reconcileID`. */
  log: Logger;
  /**
   * Aborted when the manager shuts down, or when the reconcile timeout passes (its reason then a
   * `TimeoutError` `DOMException`); pass it to long calls.
   */
  signal: AbortSignal;
}

/**
 * What a reconcile asks of the queue, as controller-runtime's `reconcile.Result`: nothing (done: the
 * key's backoff is forgotten) or `requeueAfterMs` (forget, then add after the delay: e.g. wake up at a
 * scheduled time), at `priority`.
 *
 * Throwing means failure: the key is retried with the rate limiter's backoff, unless the error is
 * terminal (`TerminalError`: counted, not retried). A throw that is a bug rather than a failure is a
 * panic, counted in `controller_runtime_reconcile_panics_total` as well as the errors and retried with
 * backoff (controller-runtime recovers panics by default too). A panic is:
 * - a thrown value that is not an `Error` (`throw 'x'`, `throw undefined`): no library fails that way;
 * - a `TypeError`, `ReferenceError` or `RangeError` without a `cause`: what the engine raises for a
 *   programming error (`undefined.x`, an undeclared name, unbounded recursion, an invalid Date's
 *   `toISOString()`). Library errors that reuse these classes for I/O failures carry a `cause`
 *   (`fetch`'s `TypeError: fetch failed`) and stay ordinary errors.
 */
export type ReconcileResult =
  | {
      requeueAfterMs?: number;
      /**
       * The priority of that requeue (`requeueAfterMs`, or the deprecated `requeue`), as
       * controller-runtime's `Result.Priority`: e.g. `NORMAL_PRIORITY` for a scheduled wake-up, which is
       * news however the key was queued. Default: the priority the key was handed out with (an object
       * first seen in the initial list stays behind every change). An integer; see `LOW_PRIORITY`.
       */
      priority?: number;
      /**
       * @deprecated Return `requeueAfterMs` with the delay you mean, or throw when something failed:
       * controller-runtime deprecated `Result.Requeue` because it mixes both (a retry with backoff that
       * is counted as neither an error nor a planned wake-up). Still honoured: the key is added again
       * with the rate limiter's backoff (`controller_runtime_reconcile_total{result="requeue"}`), and
       * `requeueAfterMs` wins when both are set.
       */
      requeue?: boolean;
    }
  | undefined;

/** A reconcile function; one that returns nothing (`Promise<void>`) means success. */
export type Reconciler<T extends KubeObject> = (
  request: ReconcileRequest<T>,
) => Promise<ReconcileResult> | Promise<void>;

/** The primary resource of a controller: what its keys name. */
export interface PrimaryResource<T extends KubeObject = KubeObject> extends ListWatchScope {
  /** The resource's `kind`, used to recognise owner references that point at it. */
  kind: string;
  /**
   * False for a cluster-scoped kind: an owned object's owner reference then names an object without a
   * namespace (controller-runtime reads the scope from its RESTMapper). Default true.
   */
  namespaced?: boolean;
  /** Which of its events reconcile (controller-runtime's `For(..., WithPredicates(...))`); default all. */
  predicate?: Predicate<T>;
  /**
   * This scope's own cache transform (see `InformerRequest.transform`); the Manager's `cacheTransform`
   * runs first.
   */
  transform?: InformerRequest<T>['transform'];
}

/** A resource whose controller owner is a primary object: its events reconcile that owner. */
export interface OwnedResource<R extends KubeObject = KubeObject> extends ListWatchScope {
  /** Which of its events reconcile the owner (`Owns(..., WithPredicates(...))`); default all. */
  predicate?: Predicate<R>;
  /**
   * This scope's own cache transform (see `InformerRequest.transform`); the Manager's `cacheTransform`
   * runs first. A method, so that `owns` may list resources of different types, each with its own.
   */
  transform?(obj: R): R;
}

/** A related resource whose events enqueue primary keys through `map`. */
export interface Watch<R extends KubeObject = KubeObject> {
  /**
   * What to watch, and optionally its own cache transform (see `InformerRequest.transform`; a method,
   * as on `OwnedResource`).
   */
  resource: ListWatchScope & { transform?(obj: R): R };
  /** The primary keys (`namespace/name`) an event on `obj` should reconcile. */
  map: (obj: R) => readonly string[];
  /** Which of its events are mapped (`Watches(..., WithPredicates(...))`); default all. */
  predicate?: Predicate<R>;
}
