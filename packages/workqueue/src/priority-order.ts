import type { ReadyOrder } from './ready-order.ts';

/** A key in line: a node of its priority's doubly linked list, so raising it unlinks it in O(1). */
interface Node<K> {
  readonly key: K;
  readonly level: Level<K>;
  prev: Node<K> | undefined;
  next: Node<K> | undefined;
}

/** The keys in line at one priority, oldest first. Exists only while it holds a key. */
interface Level<K> {
  readonly priority: number;
  head: Node<K> | undefined;
  tail: Node<K> | undefined;
}

/**
 * controller-runtime's priority order: the highest priority first, first in first out within one priority.
 * A raised key goes to the back of its new priority's line, as in controller-runtime.
 *
 * One linked list per priority present and a sorted array of those priorities: push, raise and shift are
 * O(1), plus a binary search and an insert into the array when a priority gets its first key (the array
 * holds the priorities present, two in controller-runtime's scheme, so this stays cheap).
 */
export class PriorityOrder<K> implements ReadyOrder<K> {
  readonly #nodes = new Map<K, Node<K>>();
  readonly #levels = new Map<number, Level<K>>();
  /** Priorities of the levels, ascending: the next key comes from the last, and it empties most often. */
  readonly #priorities: number[] = [];

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

  shift(): K | undefined {
    const highest = this.#priorities.at(-1);
    if (highest === undefined) return undefined;
    const node = (this.#levels.get(highest) as Level<K>).head as Node<K>;
    this.#unlink(node);
    this.#nodes.delete(node.key);
    return node.key;
  }

  #newLevel(priority: number): Level<K> {
    const level: Level<K> = { priority, head: undefined, tail: undefined };
    this.#levels.set(priority, level);
    this.#priorities.splice(this.#indexOf(priority), 0, priority);
    return level;
  }

  #unlink(node: Node<K>): void {
    const { level, prev, next } = node;
    if (prev === undefined) level.head = next;
    else prev.next = next;
    if (next === undefined) level.tail = prev;
    else next.prev = prev;
    if (level.head !== undefined) return;
    this.#levels.delete(level.priority);
    this.#priorities.splice(this.#indexOf(level.priority), 1);
  }

  /** Where `priority` is or belongs in the ascending `#priorities`. */
  #indexOf(priority: number): number {
    let low = 0;
    let high = this.#priorities.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.#priorities[middle] as number) < priority) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
