import type { GroupVersionResource, ResourceType } from '@loopwright/client';

/** A resource plus the scope of one list/watch: the unit of sharing in the factory. */
export interface ListWatchScope extends GroupVersionResource {
  /**
   * The objects' kind, where the caller knows it (a controller's primary resource does). Default: the
   * kind the list names (`PodList` lists `Pod`s), which is all the informer needs it for.
   */
  kind?: string;
  /** Whether the resource's objects live in namespaces. Default true (see {@link resourceTypeOf}). */
  namespaced?: boolean;
  /** Watch one namespace; omitted = all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * Structured log sink. Compatible with winston and console-like loggers; fields never contain
 * credentials (request headers are never logged).
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Structural metric hooks; wire them to counters in @loopwright/metrics. Must not throw. */
export interface InformerMetrics {
  /**
   * The reflector for `resource` started, before its first list: a place to create the resource's
   * series at zero, so a rate over them sees the first failure too.
   */
  started?(resource: string): void;
  /** A list or watch attempt failed; `reason` is a {@link FailureReason}. */
  watchError?(resource: string, reason: string): void;
  /**
   * A full relist is due: the watch's resourceVersion expired (410 Gone), or the resource went missing
   * after a list had succeeded (404 NotFound, its CRD deleted). Once per relist, not per list attempt.
   */
  relist?(resource: string): void;
}

/** A logger that drops everything except warnings and errors, which go to stderr. */
export const consoleLogger: Logger = {
  debug: () => undefined,
  warn: (message, fields) => {
    console.warn(message, fields ?? {});
  },
  error: (message, fields) => {
    console.error(message, fields ?? {});
  },
};

/**
 * The {@link ResourceType} of a scope's handle. An informer only lists and watches collections, so it
 * reads neither default back: `kind` `''` leaves each item's kind to the list's own (`itemKindOf` of
 * `PodList`, which the API server always sends), and `namespaced` matters only to a scope naming a
 * namespace, which says the resource has them: true, as the runtime's `PrimaryResource` defaults it.
 */
export function resourceTypeOf(scope: ListWatchScope): ResourceType {
  return {
    group: scope.group,
    version: scope.version,
    plural: scope.plural,
    kind: scope.kind ?? '',
    namespaced: scope.namespaced ?? true,
  };
}
