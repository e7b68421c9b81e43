import { Fifo } from './fifo.ts';

/** The line of ready keys: which dirty, not processing key the queue hands out next. */
export interface ReadyOrder<K> {
  /** Keys in line. */
  readonly size: number;
  /** Puts `key`, which is not in line, at the back of `priority`'s line. */
  push(key: K, priority: number): void;
  /** `key` (in line) was added again with a `priority` higher than before. */
  raise(key: K, priority: number): void;
  /** Removes and returns the next key, or `undefined` when none is in line. */
  shift(): K | undefined;
  /** Takes `keys`, all in line, out of it; the others keep their order. */
  remove(keys: ReadonlySet<K>): void;
}

/** client-go's order: first added, first handed out, whatever the priorities. */
export class FifoOrder<K> extends Fifo<K> implements ReadyOrder<K> {
  /** FIFO order ignores priorities: a raised key keeps its place. */
  raise(): void {}

  /** O(keys in line): the ring buffer is rebuilt without them. */
  remove(keys: ReadonlySet<K>): void {
    this.retain((key) => !keys.has(key));
  }
}
