/**
 * Read-your-own-writes for the At cache. After a status write the cache may still hold the version the
 * write replaced: a pod event can reach the At before the watch event of the At's own write does. A
 * reconcile deciding from that stale copy would repeat the step it just performed (another claim) and
 * be refused with 409 Conflict: no harm, since every write is conditional, but a wasted round trip at
 * the API server's limit, and a reconcile that did nothing.
 *
 * So the reconciler remembers, per At, the object its last write returned and the versions that write
 * sequence replaced. A cached copy at one of the replaced versions is known to be stale and is read as
 * the written object instead; any other version (the write itself, or something newer) means the cache
 * has caught up, and the entry is dropped. No resourceVersion is ever compared for order: they are
 * opaque strings.
 *
 * Entries live from a write until the next reconcile of that At, which the write's own watch event
 * guarantees (or until the At is gone), so the map holds at most the Ats written since their last event.
 */
interface Versioned {
  metadata?: { uid?: string; resourceVersion?: string };
}

interface Entry<T> {
  uid: string | undefined;
  /** Versions a write of this process replaced since the cache last caught up. */
  replaced: Set<string>;
  written: T;
}

export class OwnWrites<T extends Versioned> {
  readonly #entries = new Map<string, Entry<T>>();

  /** Records that `written` replaced version `replacedVersion` of the object under `key`. */
  wrote(key: string, replacedVersion: string, written: T): void {
    const uid = written.metadata?.uid;
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.uid === uid) {
      entry.replaced.add(replacedVersion);
      entry.written = written;
      return;
    }
    this.#entries.set(key, { uid, replaced: new Set([replacedVersion]), written });
  }

  /** The newest version known of `cached`: the cache's own, unless a write of ours replaced it. */
  latest(key: string, cached: T): T {
    const entry = this.#entries.get(key);
    if (entry === undefined) return cached;
    const stale =
      entry.uid === cached.metadata?.uid && entry.replaced.has(cached.metadata?.resourceVersion ?? '');
    if (stale) return entry.written;
    this.#entries.delete(key);
    return cached;
  }

  /** The object is gone: nothing of it is worth remembering. */
  forget(key: string): void {
    this.#entries.delete(key);
  }

  /** Objects with a write the cache has not shown yet (tests, metrics). */
  get size(): number {
    return this.#entries.size;
  }
}
