import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DelayHeap } from './delay-heap.ts';

function popAll(heap: DelayHeap<string>, now = Infinity): string[] {
  const keys: string[] = [];
  for (let due = heap.popDue(now); due !== undefined; due = heap.popDue(now)) keys.push(due.key);
  return keys;
}

describe('DelayHeap', () => {
  it('pops only due keys, earliest first', () => {
    const heap = new DelayHeap<string>();
    heap.schedule('c', 30);
    heap.schedule('a', 10);
    heap.schedule('b', 20);
    assert.equal(heap.peekReadyAt(), 10);
    assert.deepEqual(popAll(heap, 20), ['a', 'b']);
    assert.equal(heap.size, 1);
    assert.deepEqual(popAll(heap, 29), []);
    assert.deepEqual(popAll(heap, 30), ['c']);
    assert.equal(heap.peekReadyAt(), undefined);
  });

  it('moves a key earlier (decrease-key) and ignores a later time', () => {
    const heap = new DelayHeap<string>();
    for (let i = 0; i < 100; i++) heap.schedule(`k${i}`, 100 + i);
    assert.equal(heap.schedule('k99', 50), true);
    assert.equal(heap.schedule('k0', 500), false);
    assert.equal(heap.size, 100);
    const order = popAll(heap);
    assert.equal(order[0], 'k99');
    assert.equal(order[1], 'k0');
    assert.equal(order.length, 100);
  });

  it('matches a stable sort under random inserts and decrease-keys', () => {
    let seed = 3;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const heap = new DelayHeap<string>();
    const readyAt = new Map<string, { at: number; seq: number }>();
    let seq = 0;
    for (let i = 0; i < 5000; i++) {
      const key = `k${Math.floor(random() * 2000)}`;
      const at = Math.floor(random() * 300);
      heap.schedule(key, at);
      const current = readyAt.get(key);
      if (current === undefined || at < current.at) readyAt.set(key, { at, seq: seq++ });
    }
    const expected = [...readyAt].sort(([, x], [, y]) => x.at - y.at || x.seq - y.seq).map(([key]) => key);
    assert.deepEqual(popAll(heap), expected);
  });

  it('clear() forgets every key', () => {
    const heap = new DelayHeap<string>();
    heap.schedule('a', 1);
    heap.clear();
    assert.equal(heap.size, 0);
    assert.equal(heap.schedule('a', 5), true, 'a is scheduled afresh, not compared with the cleared entry');
    assert.deepEqual(popAll(heap), ['a']);
  });
});
