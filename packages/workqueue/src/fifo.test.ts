import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Fifo } from './fifo.ts';

describe('Fifo', () => {
  it('keeps order across wrap-around and growth', () => {
    const fifo = new Fifo<number>();
    const expected: number[] = [];
    let next = 0;
    // Interleave pushes and shifts so the head wraps before every growth.
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 10 * (round + 1); i++) {
        fifo.push(next);
        expected.push(next++);
      }
      for (let i = 0; i < 7; i++) assert.equal(fifo.shift(), expected.shift());
      assert.equal(fifo.size, expected.length);
    }
    while (expected.length > 0) assert.equal(fifo.shift(), expected.shift());
    assert.equal(fifo.shift(), undefined);
    assert.equal(fifo.size, 0);
  });

  it('clear() empties it', () => {
    const fifo = new Fifo<string>();
    for (let i = 0; i < 40; i++) fifo.push(`k${i}`);
    fifo.clear();
    assert.equal(fifo.size, 0);
    assert.equal(fifo.shift(), undefined);
    fifo.push('a');
    assert.equal(fifo.shift(), 'a');
  });
});
