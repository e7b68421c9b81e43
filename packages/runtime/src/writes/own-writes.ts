/**
 * Read-your-own-writes for a controller's primary objects (the Java Operator SDK's
 * `ResourceOperations` does the same). After a status write the informer's cache still holds the
 * version the write replaced until the write's watch event arrives, and an event of another object (an
 * owned pod) can reconcile before that. Deciding from the stale copy would repeat the step just
 * performed and be refused with 409 Conflict: a wasted round trip and a reconcile that did nothing.
 *
 * So the controller remembers, per key, the object its last write returned and the versions its
 * writes replaced since the cache last caught up. A cached copy at a replaced version is stale and is
 * read as the written object; any other version (the write itself, or something newer) means the cache
 * has caught up, and the entry is dropped. resourceVersions are opaque: they are compared for equality,
 * never for order.
 *
 * The same knowledge recognises the echo of a write: an update from a replaced version straight to a
 * version of ours. A reconcile already acted on that object (it wrote it), so the echo enqueues nothing.
 * Only a conditional write (a resourceVersion precondition) is known to have replaced exactly the
 * version it names: an unconditional one may have landed on someone else's newer version, whose own
 * event a relist can skip (an update from the version we decided from straight to ours). So after an
 * unconditional write the overlay still serves the written object, but no update counts as its echo.
 */
import type { KubeObject } from '@loopwright/client';

interface Entry<K> {
  uid: string | undefined;
  /** Versions a write of this controller replaced since the cache last caught up. */
  replaced: Set<string>;
  /** Every write since the cache last caught up was conditional: each replaced exactly its version. */
  exact: boolean;
  written: K;
}

export class OwnWrites<K extends KubeObject> {
  readonly #entries = new Map<string, Entry<K>>();

  /**
   * Records that `written` replaced version `replacedVersion` of the object under `key`: exactly that
   * version when the write was conditional on it (`exact`), else the version the writer last knew.
   */
  wrote(key: string, replacedVersion: string, written: K, { exact }: { exact: boolean }): void {
    const uid = written.metadata?.uid;
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.uid === uid) {
      entry.replaced.add(replacedVersion);
      entry.exact &&= exact;
      entry.written = written;
      return;
    }
    this.#entries.set(key, { uid, replaced: new Set([replacedVersion]), exact, written });
  }

  /**
   * The newest version known of the object under `key`: the cache's own (`cached`), unless a write of
   * ours replaced it. `undefined` (gone from the cache) forgets the entry.
   */
  latest(key: string, cached: K | undefined): K | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return cached;
    if (cached !== undefined && this.#replaced(entry, cached)) return entry.written;
    this.#entries.delete(key);
    return cached;
  }

  /**
   * Judges a cache update of the object under `key`: true when it is only the echo of our own writes
   * (from a version a conditional write replaced to one we wrote, the same object), which needs no reconcile. Any
   * other update is someone else's change (or a relist that skipped versions) and reconciles as usual.
   * Once the cache shows the last write, or anything not ours, the entry is dropped.
   */
  isEcho(key: string, oldObj: K, newObj: K): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    const caughtUp =
      entry.uid === newObj.metadata?.uid &&
      newObj.metadata?.resourceVersion === entry.written.metadata?.resourceVersion;
    const ours = caughtUp || this.#replaced(entry, newObj);
    if (!ours || caughtUp) this.#entries.delete(key);
    return entry.exact && ours && oldObj !== newObj && this.#replaced(entry, oldObj);
  }

  /** The object is gone: nothing of it is worth remembering. */
  forget(key: string): void {
    this.#entries.delete(key);
  }

  /** Objects with a write the cache has not shown yet. */
  get size(): number {
    return this.#entries.size;
  }

  #replaced(entry: Entry<K>, obj: K): boolean {
    const version = obj.metadata?.resourceVersion;
    return entry.uid === obj.metadata?.uid && version !== undefined && entry.replaced.has(version);
  }
}
