/**
 * @loopwright/runtime: controllers as controller-runtime builds them. A {@link Manager} owns the
 * shared informers, the rate-limited {@link KubeClient}, leader election, health and metrics; each
 * {@link Controller} maps watch events to keys and reconciles them from a work queue.
 */
export { Controller, type ControllerContext, type ControllerOptions } from './controller/controller.ts';
export { enqueueControllerOwner, groupOf, splitKey } from './controller/mappers.ts';
export {
  and,
  annotationsChanged,
  generationChanged,
  ignoreStatusOnlyUpdates,
  labelsChanged,
  not,
  or,
  type Predicate,
} from './controller/predicates.ts';
/** The priorities of keys in a controller's queue (see `ControllerOptions.usePriorityQueue`). */
export { LOW_PRIORITY, NORMAL_PRIORITY } from '@loopwright/workqueue';
export type {
  OwnedResource,
  PrimaryResource,
  ReconcileRequest,
  ReconcileResult,
  Reconciler,
  Watch,
} from './controller/types.ts';
export {
  CacheSyncTimeoutError,
  GracefulShutdownTimeoutError,
  Manager,
  runManager,
  type LeaderElectionOptions,
  type ManagerExit,
  type ManagerOptions,
} from './manager/manager.ts';
export * from './errors/index.ts';
export { defaultRetry, retryOnConflict, type RetryOnConflictOptions } from './writes/retry-on-conflict.ts';
export type { StatusWriter } from './writes/status-writer.ts';
export * from './client.ts';
export * from './log/index.ts';
export * from './events/index.ts';
export * from './cli/index.ts';
export * from './config/index.ts';
export * from './conditions/index.ts';
