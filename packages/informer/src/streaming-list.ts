import { isInvalid, type KubeObject } from '@loopwright/client';
import { objectKey } from './indexers.ts';
import type { ObjectEvent } from './reflector.ts';

/**
 * How a reflector fills its cache, at start and after 410 Gone:
 * - `watch-list`: a streaming list (WatchList, KEP-3157), one watch with `sendInitialEvents=true`
 *   whose initial events are the collection's state, ended by a bookmark; the same watch then goes on;
 * - `list`: a paginated list, then a watch from its resourceVersion.
 */
export type InitialSync = 'watch-list' | 'list';

/** The annotation (value `"true"`) of the BOOKMARK that ends a streaming list's initial events. */
const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** Whether a BOOKMARK's object marks the end of a streaming list's initial events. */
export function isInitialEventsEnd(bookmark: KubeObject): boolean {
  return bookmark.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true';
}

/** The API server showed that it does not do streaming lists; the reflector lists instead. */
export class StreamingListRefusedError extends Error {
  override readonly name = 'StreamingListRefusedError';
}

/**
 * Whether a streaming list failed because the API server does not do them, rather than for a reason
 * a retry can cure. A server with the WatchList feature gate off answers 422 Invalid (its validation of
 * the `ListOptions` forbids `sendInitialEvents`), and so do servers 1.19 to 1.26, which do not know
 * `sendInitialEvents` and forbid `resourceVersionMatch` on a watch. An older one ignores both and sends
 * a plain watch's events, whose periodic bookmarks give it away ({@link StreamingListRefusedError}).
 */
export function isStreamingListRefusal(error: unknown): boolean {
  return error instanceof StreamingListRefusedError || isInvalid(error);
}

/**
 * The state a streaming list's initial events describe, kept apart from the cache until the end
 * bookmark so that the cache is replaced once, as by a list (client-go's temporary store). The initial
 * events are ADDED events; an older API server may let a change through before the bookmark, which
 * applies here like any other (client-go does the same).
 */
export class InitialEvents<T extends KubeObject> {
  readonly #objects = new Map<string, T>();

  apply(event: ObjectEvent<T>): void {
    if (event.type === 'DELETED') this.#objects.delete(objectKey(event.object));
    else this.#objects.set(objectKey(event.object), event.object);
  }

  /** Every object, in the order it first arrived. */
  items(): T[] {
    return [...this.#objects.values()];
  }
}
