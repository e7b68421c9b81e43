import type { ReadyOrder } from './ready-order.ts';

/** A key in line: a node of its priority's doubly linked list, so raising it unlinks it in O(1). */
interface Node<K> {
  readonly key: K;
  readonly level: Level<K>;
  prev: Node<K> | undefined;
  next: Node<K> | undefined;
}

/**
 * The keys in line at one priority, oldest first. An emptied level stays until `shift` passes it: a
 * priority that empties and fills again on every add and hand-out (one busy priority) costs no Map or
 * array update.
 */
interface Level<K> {
  readonly priority: number;
  head: Node<K> | undefined;
  tail: Node<K> | undefined;
}

/**
 * controller-runtime's priority order: the highest priority first, first in first out within one priority.
 * A raised key goes to the back of its new priority's line, as in controller-runtime.
 *
 * One linked list per priority and an array of those lists sorted by priority: push, raise and shift are
 * O(1), plus a binary search and an insert into the array when a priority gets its first key (the array
 * holds the priorities in use, two in controller-runtime's scheme, so this stays cheap).
 */
export class PriorityOrder<K> implements ReadyOrder<K> {
  readonly #nodes = new Map<K, Node<K>>();
  readonly #levels = new Map<number, Level<K>>();
  /** The levels by ascending priority: the next key comes from the last one that is not empty. */
  readonly #sorted: Level<K>[] = [];

  get size(): number {
    return this.#nodes.size;
  }

  push(key: K, priority: number): void {
    const level = this.#levels.get(priority) ?? this.#newLevel(priority);
    const node: Node<K> = { key, level, prev: level.tail, next: undefined };
    if (level.tail === undefined) level.head = node;
    else level.tail.next = node;
    level.tail = node;
    this.#nodes.set(key, node);
  }

  raise(key: K, priority: number): void {
    const node = this.#nodes.get(key) as Node<K>;
    this.#unlink(node);
    this.push(key, priority);
  }

  remove(keys: ReadonlySet<K>): void {
    for (const key of keys) {
      const node = this.#nodes.get(key) as Node<K>;
      this.#unlink(node);
      this.#nodes.delete(key);
    }
  }

  shift(): K | undefined {
    for (let level = this.#sorted.at(-1); level !== undefined; level = this.#sorted.at(-1)) {
      const node = level.head;
      if (node === undefined) {
        // Emptied earlier, now passed: forget it, so a priority no longer used costs nothing.
        this.#sorted.pop();
        this.#levels.delete(level.priority);
        continue;
      }
      this.#unlink(node);
      this.#nodes.delete(node.key);
      return node.key;
    }
    return undefined;
  }

  #newLevel(priority: number): Level<K> {
    const level: Level<K> = { priority, head: undefined, tail: undefined };
    this.#levels.set(priority, level);
    this.#sorted.splice(this.#insertionIndex(priority), 0, level);
    return level;
  }

  #unlink(node: Node<K>): void {
    const { level, prev, next } = node;
    if (prev === undefined) level.head = next;
    else prev.next = next;
    if (next === undefined) level.tail = prev;
    else next.prev = prev;
  }

  /** Where a new level of `priority` belongs in the ascending `#sorted`. */
  #insertionIndex(priority: number): number {
    let low = 0;
    let high = this.#sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.#sorted[middle] as Level<K>).priority < priority) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
