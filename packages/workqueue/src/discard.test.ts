import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import { DelayHeap } from './delay-heap.ts';
import { Fifo } from './fifo.ts';
import { LOW_PRIORITY, newRateLimitingQueue, type Ordering, type RateLimitingQueue } from './index.ts';
import { takeReady } from './queue.test-support.ts';

function setup(ordering: Ordering = 'fifo'): { clock: FakeClock; queue: RateLimitingQueue<string> } {
  const clock = new FakeClock();
  return { clock, queue: newRateLimitingQueue({ clock, ordering }) };
}

const startsWithX = (key: string): boolean => key.startsWith('x');

describe('discard', () => {
  for (const ordering of ['fifo', 'priority'] as const) {
    it(`takes matching ready keys out of the line, the others keep their order (${ordering})`, () => {
      const { queue } = setup(ordering);
      for (const key of ['a', 'x1', 'b', 'x2', 'c', 'x3']) queue.add(key);
      assert.equal(queue.discard(startsWithX), 3);
      assert.equal(queue.len(), 3);
      assert.deepEqual(takeReady(queue), ['a', 'b', 'c']);
    });

    it(`a discarded key added again is queued as a new key (${ordering})`, () => {
      const { queue } = setup(ordering);
      queue.add('x1');
      queue.add('a');
      queue.discard(startsWithX);
      queue.add('x1');
      assert.deepEqual(takeReady(queue), ['a', 'x1']);
    });
  }

  it('keeps priority order among the keys left, across priorities', () => {
    const { queue } = setup('priority');
    queue.add('low', LOW_PRIORITY);
    queue.add('x-low', LOW_PRIORITY);
    queue.add('x-normal');
    queue.add('normal');
    queue.discard(startsWithX);
    assert.deepEqual(takeReady(queue), ['normal', 'low']);
  });

  it('empties the line when every key matches, across the ring buffer wrapping', () => {
    const { queue } = setup();
    for (let i = 0; i < 20; i++) queue.add(`x${i}`);
    assert.equal(queue.tryGet()?.key, 'x0'); // the head moves, so the line wraps as it refills
    queue.done('x0');
    for (let i = 20; i < 30; i++) queue.add(`x${i}`);
    assert.equal(
      queue.discard(() => true),
      29,
    );
    assert.equal(queue.len(), 0);
    assert.equal(queue.tryGet(), undefined);
  });

  it('a processing key added again is not put back in line by its done(); the key stays processing', () => {
    const { queue } = setup();
    queue.add('x1');
    assert.equal(queue.tryGet()?.key, 'x1');
    queue.add('x1');
    assert.equal(queue.discard(startsWithX), 1);
    queue.add('x1'); // still processing: dirty again, queued at done()
    assert.equal(queue.len(), 0, 'a processing key is not queued');
    queue.done('x1');
    assert.deepEqual(takeReady(queue), ['x1'], 'the add after the discard counts');
  });

  it('does not ask about a key processing and not added again, nor drop it', () => {
    const { queue } = setup();
    queue.add('x1');
    queue.tryGet();
    const asked: string[] = [];
    assert.equal(
      queue.discard((key) => {
        asked.push(key);
        return true;
      }),
      0,
    );
    assert.deepEqual(asked, []);
    queue.add('x1');
    queue.done('x1');
    assert.deepEqual(takeReady(queue), ['x1']);
  });

  it('drops delayed keys; the others still come when due, and the timer survives its key', () => {
    const { clock, queue } = setup();
    queue.addAfter('x-first', 10);
    queue.addAfter('a', 20);
    queue.addAfter('x-late', 30);
    queue.addAfter('b', 40);
    assert.equal(queue.discard(startsWithX), 2);
    clock.step(10);
    assert.deepEqual(takeReady(queue), []);
    clock.step(10);
    assert.deepEqual(takeReady(queue), ['a']);
    clock.step(20);
    assert.deepEqual(takeReady(queue), ['b']);
    clock.step(1000);
    assert.deepEqual(takeReady(queue), []);
  });

  it('counts a key both in line and waiting twice, and drops both', () => {
    const { clock, queue } = setup();
    queue.add('x1');
    queue.addAfter('x1', 10);
    assert.equal(queue.discard(startsWithX), 2);
    clock.step(10);
    assert.deepEqual(takeReady(queue), []);
  });

  it("forgets a dropped key's failures, and only a dropped key's", () => {
    const { queue } = setup();
    queue.addRateLimited('x1');
    queue.addRateLimited('a');
    assert.equal(queue.numRequeues('x1'), 1);
    queue.discard(startsWithX);
    assert.equal(queue.numRequeues('x1'), 0);
    assert.equal(queue.numRequeues('a'), 1);
  });

  it('keeps the failures of a processing key it does not drop', () => {
    const { queue } = setup();
    queue.add('x1');
    queue.tryGet();
    queue.addRateLimited('x1');
    queue.discard((key) => key === 'other');
    assert.equal(queue.numRequeues('x1'), 1);
  });
});

describe('Fifo.retain', () => {
  it('keeps the kept items in order across a wrapped ring, and the buffer stays usable', () => {
    const fifo = new Fifo<number>();
    for (let i = 0; i < 12; i++) fifo.push(i);
    for (let i = 0; i < 10; i++) fifo.shift();
    for (let i = 12; i < 26; i++) fifo.push(i); // wraps around the 16-slot ring
    fifo.retain((item) => item % 3 !== 0);
    const expected = [10, 11, 13, 14, 16, 17, 19, 20, 22, 23, 25];
    assert.equal(fifo.size, expected.length);
    fifo.push(99);
    const out: number[] = [];
    for (let item = fifo.shift(); item !== undefined; item = fifo.shift()) out.push(item);
    assert.deepEqual(out, [...expected, 99]);
  });
});

describe('DelayHeap.removeWhere', () => {
  it('leaves a valid heap: the rest pop in ready order, ties in scheduling order', () => {
    const heap = new DelayHeap<string>();
    const times = new Map<string, number>();
    let seed = 7;
    const random = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let i = 0; i < 500; i++) {
      const at = Math.floor(random() * 50);
      times.set(`k${i}`, at);
      heap.schedule(`k${i}`, at);
    }
    const dropped = (key: string): boolean => Number(key.slice(1)) % 4 === 1;
    assert.equal(heap.removeWhere(dropped), 125);
    assert.equal(heap.size, 375);
    const order: string[] = [];
    for (let due = heap.popDue(Infinity); due !== undefined; due = heap.popDue(Infinity)) order.push(due.key);
    const expected = [...times.keys()]
      .filter((key) => !dropped(key))
      .sort(
        (a, b) =>
          (times.get(a) as number) - (times.get(b) as number) || Number(a.slice(1)) - Number(b.slice(1)),
      );
    assert.deepEqual(order, expected);
  });

  it('a removed key can be scheduled again, and a kept one still moves earlier', () => {
    const heap = new DelayHeap<string>();
    heap.schedule('a', 10);
    heap.schedule('b', 20);
    heap.schedule('c', 30);
    heap.removeWhere((key) => key === 'a');
    assert.equal(heap.schedule('a', 40), true);
    assert.equal(heap.schedule('c', 5), true);
    assert.equal(heap.peekReadyAt(), 5);
    const order: string[] = [];
    for (let due = heap.popDue(Infinity); due !== undefined; due = heap.popDue(Infinity)) order.push(due.key);
    assert.deepEqual(order, ['c', 'b', 'a']);
  });
});
