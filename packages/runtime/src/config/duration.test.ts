import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDuration } from './duration.ts';

describe('parseDuration (Go time.ParseDuration)', () => {
  it('reads every unit, sequences and fractions', () => {
    const cases: [string, number][] = [
      ['0', 0],
      ['0s', 0],
      ['500ms', 500],
      ['30s', 30_000],
      ['1m30s', 90_000],
      ['1h2m3s4ms', 3_723_004],
      ['1.5s', 1500],
      ['.5s', 500],
      ['1.s', 1000],
      ['2h45m', 9_900_000],
      ['1500us', 1.5],
      ['1500\u00b5s', 1.5],
      ['1500\u03bcs', 1.5],
      ['2000000ns', 2],
    ];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  });

  it('rejects what Go rejects, and negative durations', () => {
    for (const text of ['', '5', '1', 's', '1d', '5 s', ' 5s', '1m 30s', '-5s', '+5s', '1e3s', 'ms'])
      assert.equal(parseDuration(text), undefined, JSON.stringify(text));
  });
});
