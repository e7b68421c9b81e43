import { NORMAL_PRIORITY } from './priority.ts';

/** A key whose delay ended, and the priority it is to be added with. */
export interface DueKey<K> {
  readonly key: K;
  readonly priority: number;
}

interface Entry<K> extends DueKey<K> {
  priority: number;
  readyAt: number;
  /** Tie-breaker: keys due at the same instant come out in the order they were scheduled. */
  seq: number;
  /** Position in the heap array, kept current so a key can move earlier in O(log n). */
  index: number;
}

function less<K>(a: Entry<K>, b: Entry<K>): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
}

/**
 * A binary min-heap of keys by ready time with an index map: one entry per key, so rescheduling a waiting
 * key to an earlier time is a decrease-key instead of a second entry. Each key also carries the highest
 * priority it was scheduled with.
 */
export class DelayHeap<K> {
  readonly #heap: Entry<K>[] = [];
  readonly #byKey = new Map<K, Entry<K>>();
  #seq = 0;

  get size(): number {
    return this.#heap.length;
  }

  /**
   * Schedules `key` at `readyAt` with `priority`. A key already waiting keeps the earlier of its current and
   * the new time, and the higher of its current and the new priority.
   * @returns true when `key` changed position (inserted or moved earlier).
   */
  schedule(key: K, readyAt: number, priority = NORMAL_PRIORITY): boolean {
    const existing = this.#byKey.get(key);
    if (existing !== undefined) {
      existing.priority = Math.max(existing.priority, priority);
      if (readyAt >= existing.readyAt) return false;
      existing.readyAt = readyAt;
      existing.seq = this.#seq++;
      this.#up(existing.index);
      return true;
    }
    const entry: Entry<K> = { key, priority, readyAt, seq: this.#seq++, index: this.#heap.length };
    this.#heap.push(entry);
    this.#byKey.set(key, entry);
    this.#up(entry.index);
    return true;
  }

  /** The earliest ready time, or `undefined` when empty. */
  peekReadyAt(): number | undefined {
    return this.#heap[0]?.readyAt;
  }

  /** Removes and returns the earliest key if it is ready at `now`, else `undefined`. */
  popDue(now: number): DueKey<K> | undefined {
    const top = this.#heap[0];
    if (top === undefined || top.readyAt > now) return undefined;
    const last = this.#heap.pop() as Entry<K>;
    if (last !== top) {
      last.index = 0;
      this.#heap[0] = last;
      this.#down(0);
    }
    this.#byKey.delete(top.key);
    return top;
  }

  /** Removes every key for which `drop` is true; returns how many. O(n): the heap is rebuilt. */
  removeWhere(drop: (key: K) => boolean): number {
    const kept = this.#heap.filter((entry) => !drop(entry.key));
    const removed = this.#heap.length - kept.length;
    if (removed === 0) return 0;
    this.#heap.length = 0;
    this.#byKey.clear();
    for (const entry of kept) {
      entry.index = this.#heap.length;
      this.#heap.push(entry);
      this.#byKey.set(entry.key, entry);
    }
    for (let index = (this.#heap.length >> 1) - 1; index >= 0; index--) this.#down(index);
    return removed;
  }

  clear(): void {
    this.#heap.length = 0;
    this.#byKey.clear();
  }

  #up(index: number): void {
    const heap = this.#heap;
    const entry = heap[index] as Entry<K>;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex] as Entry<K>;
      if (!less(entry, parent)) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  #down(index: number): void {
    const heap = this.#heap;
    const length = heap.length;
    const entry = heap[index] as Entry<K>;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      let child = heap[left] as Entry<K>;
      let childIndex = left;
      if (right < length && less(heap[right] as Entry<K>, child)) {
        child = heap[right] as Entry<K>;
        childIndex = right;
      }
      if (!less(child, entry)) break;
      heap[index] = child;
      child.index = index;
      index = childIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }
}
