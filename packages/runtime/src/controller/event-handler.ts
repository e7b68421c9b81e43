import type { EventHandlers, KubeObject } from '@loopwright/informer';
import { LOW_PRIORITY, NORMAL_PRIORITY } from '@loopwright/workqueue';
import type { Predicate } from './predicates.ts';

/**
 * Informer handlers that `enqueue` the keys `map` gives for every event `predicate` lets through
 * (controller-runtime's event handler behind its predicates). An update enqueues the keys of both the
 * old and the new object: a changed owner reference or label must reach the previous owner too.
 * Each key is enqueued once per event: an idle worker takes a key the moment it is added, so adding
 * it again for the other object of the same event would reconcile it twice.
 *
 * Each key is enqueued with a priority, as controller-runtime's priority queue: `LOW_PRIORITY` for
 * what is not news (an add from the informer's initial list, a periodic resync), `NORMAL_PRIORITY`
 * for every change seen since, so that after a restart a new or changed object is not queued behind
 * the whole backlog. A queue in FIFO order ignores it.
 *
 * The informer reports two things as updates that are not changes, and they are judged as what they are:
 * - a periodic resync (`oldObj === newObj`) goes to `predicate.resync`;
 * - an update whose UID changed is an object deleted and re-created under the same name while the
 *   watch was disconnected, which the relist diff reports as one update. It is judged as the delete of
 *   the old object (final state unknown) and the create of the new one, so a generation predicate does
 *   not drop it (both generations are often 1).
 */
export function enqueueFiltered<R extends KubeObject>(
  enqueue: (key: string, priority: number, obj: R) => void,
  map: (obj: R) => readonly string[],
  predicate: Predicate<R> = {},
): EventHandlers<R> {
  const enqueueMapped = (priority: number, ...objects: R[]): void => {
    // Each key once, with the last object that maps to it (of a re-created object, the new one).
    const keys = new Map<string, R>();
    for (const obj of objects) for (const key of map(obj)) keys.set(key, obj);
    for (const [key, obj] of keys) enqueue(key, priority, obj);
  };
  const created = (obj: R): boolean => predicate.create?.(obj) ?? true;
  const deleted = (obj: R, info: { finalStateUnknown: boolean }): boolean =>
    predicate.delete?.(obj, info) ?? true;
  return {
    onAdd: (obj, isInInitialList) => {
      if (created(obj)) enqueueMapped(isInInitialList ? LOW_PRIORITY : NORMAL_PRIORITY, obj);
    },
    onUpdate: (oldObj, newObj) => {
      if (oldObj === newObj) {
        if (predicate.resync?.(newObj) ?? true) enqueueMapped(LOW_PRIORITY, newObj);
      } else if (recreated(oldObj, newObj)) {
        const gone = deleted(oldObj, { finalStateUnknown: true });
        enqueueMapped(NORMAL_PRIORITY, ...(gone ? [oldObj] : []), ...(created(newObj) ? [newObj] : []));
      } else if (predicate.update?.(oldObj, newObj) ?? true) {
        enqueueMapped(NORMAL_PRIORITY, oldObj, newObj);
      }
    },
    onDelete: (obj, info) => {
      if (deleted(obj, info)) enqueueMapped(NORMAL_PRIORITY, obj);
    },
  };
}

function recreated(oldObj: KubeObject, newObj: KubeObject): boolean {
  const before = oldObj.metadata?.uid;
  const after = newObj.metadata?.uid;
  return before !== undefined && after !== undefined && before !== after;
}
