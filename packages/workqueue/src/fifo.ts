/**
 * A growable ring buffer. `Array.prototype.shift` is O(n) once V8 leaves its small-array fast path, and a
 * work queue holding 100k ready keys shifts on every `get()`.
 */
export class Fifo<T> {
  #items: (T | undefined)[] = new Array<T | undefined>(16);
  #mask = 15;
  #head = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(item: T): void {
    if (this.#size === this.#items.length) this.#grow();
    this.#items[(this.#head + this.#size) & this.#mask] = item;
    this.#size++;
  }

  /** Removes and returns the oldest item, or `undefined` when empty. */
  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const item = this.#items[this.#head];
    // Drop the reference so a handed-out item can be collected.
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) & this.#mask;
    this.#size--;
    return item;
  }

  /** Keeps only the items for which `keep` is true, in their order. */
  retain(keep: (item: T) => boolean): void {
    const size = this.#size;
    let kept = 0;
    for (let i = 0; i < size; i++) {
      const item = this.#items[(this.#head + i) & this.#mask] as T;
      if (keep(item)) this.#items[(this.#head + kept++) & this.#mask] = item;
    }
    for (let i = kept; i < size; i++) this.#items[(this.#head + i) & this.#mask] = undefined;
    this.#size = kept;
  }

  clear(): void {
    this.#items = new Array<T | undefined>(16);
    this.#mask = 15;
    this.#head = 0;
    this.#size = 0;
  }

  #grow(): void {
    const old = this.#items;
    const grown = new Array<T | undefined>(old.length * 2);
    for (let i = 0; i < this.#size; i++) grown[i] = old[(this.#head + i) & this.#mask];
    this.#items = grown;
    this.#mask = grown.length - 1;
    this.#head = 0;
  }
}
