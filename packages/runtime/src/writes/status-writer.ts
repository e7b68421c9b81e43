/**
 * The status writes a reconcile makes through the runtime: each is remembered (see {@link OwnWrites}),
 * so the next reconcile of the object decides from what was written even while the cache lags, and the
 * write's own watch event does not reconcile the object again.
 */
import type { KubeObject, ObjectKey, Patch, PatchOptions, Resource } from '@loopwright/client';
import type { OwnWrites } from './own-writes.ts';

/** Writes the status of the object being reconciled (`ReconcileRequest.status`). */
export interface StatusWriter<K extends KubeObject> {
  /**
   * Patches the object's status subresource and resolves with the object as written. With
   * `resourceVersion`, only if the object is still at that version (409 Conflict otherwise).
   *
   * The written object is what the next reconcile of this key reads until the cache shows it (or
   * something newer). With `resourceVersion`, its watch event (the echo of this write, with nothing else
   * changed) does not reconcile the object again: a reconcile that writes status decides its next step
   * itself (returns `requeueAfterMs`, or relies on the events of what it acts on), since no reconcile
   * follows the write. An unconditional write's event reconciles as any other (see `OwnWrites`).
   */
  patch(patch: Patch, options?: PatchOptions): Promise<K>;
}

/**
 * The status writer of one reconcile of `key` (`objectKey`, as the cache names it). `decidedFrom` is the object the reconcile was given
 * (the overlay of earlier writes included): an unconditional write replaced at least that version.
 * `cachedVersion` reads the cache's version now, to see whether the write's event already arrived.
 */
export function ownStatusWriter<K extends KubeObject>(
  resource: Resource<K>,
  writes: OwnWrites<K>,
  key: string,
  objectKey: ObjectKey,
  decidedFrom: K | undefined,
  cachedVersion: () => string | undefined,
): StatusWriter<K> {
  let current = decidedFrom;
  return {
    async patch(patch, options = {}) {
      const replacedVersion = options.resourceVersion ?? current?.metadata?.resourceVersion;
      const written = await resource.status.patch(objectKey, patch, options);
      current = written;
      // The write's event may have beaten its answer here: then the cache has caught up already.
      if (cachedVersion() === written.metadata?.resourceVersion) writes.forget(key);
      else if (replacedVersion !== undefined) {
        writes.wrote(key, replacedVersion, written, { exact: options.resourceVersion !== undefined });
      }
      return written;
    },
  };
}
