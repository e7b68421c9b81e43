/**
 * @loopwright/informer: list/watch reflector that never stalls, indexed store, shared informers.
 *
 * Pieces, each usable on its own: {@link createResourceClient} (list + watch of one scope, on a
 * resource's handle from @loopwright/client)
 * -> {@link Reflector} (list, watch, recover) -> {@link Informer} ({@link Store} + handlers + resync)
 * -> {@link SharedInformerFactory} (one informer per scope per process).
 *
 * @packageDocumentation
 */
export { HandlerError, InformerStoppedError } from './errors.ts';
export { FailureReason } from './failure-reason.ts';
export { SharedInformerFactory, type InformerRequest, type SharedInformerFactoryOptions } from './factory.ts';
export {
  controllerOwnerIndex,
  keyFor,
  labelIndex,
  NAMESPACE_INDEX,
  objectKey,
  type IndexFunc,
  type Indexers,
} from './indexers.ts';
export {
  Informer,
  type EventHandlers,
  type HandlerRegistration,
  type InformerOptions,
  type InformerSettings,
  type InformerSource,
} from './informer.ts';
export {
  Reflector,
  type ObjectEvent,
  type ReflectorBackoffOptions,
  type ReflectorOptions,
  type ReflectorSink,
  REFLECTOR_BACKOFF,
} from './reflector.ts';
export { Store, type Lister } from './store.ts';
export type { InitialSync } from './streaming-list.ts';
export { stripManagedFields } from './strip-managed-fields.ts';
export {
  createResourceClient,
  type ResourceClientOptions,
  type ListResult,
  type ResourceClient,
  type WatchRequest,
} from './list-watch.ts';
export {
  consoleLogger,
  resourceTypeOf,
  type InformerMetrics,
  type ListWatchScope,
  type Logger,
} from './types.ts';
// The objects the informer caches are the client's: re-exported for the informer's users.
export type { KubeObject, ObjectMeta, OwnerReference, WatchEvent } from '@loopwright/client';
