import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { random } from './random.test-support.ts';
import { formatHoldings, HOLDINGS_ANNOTATION, HoldingsError, parseHoldings } from './holdings.ts';

const ALL = Array.from({ length: 256 }, (_, bucket) => bucket);

describe('formatHoldings', () => {
  it('writes sorted inclusive runs, single buckets alone, nothing as the empty string', () => {
    assert.equal(formatHoldings([]), '');
    assert.equal(formatHoldings([40]), '40');
    assert.equal(formatHoldings(ALL), '0-255');
    assert.equal(formatHoldings([...ALL.slice(0, 13), 40, ...ALL.slice(42)]), '0-12,40,42-255');
  });

  it('sorts and drops duplicates', () => {
    assert.equal(formatHoldings([9, 1, 2, 9, 3, 255]), '1-3,9,255');
  });

  it('refuses what is not a bucket', () => {
    assert.throws(() => formatHoldings([256]), RangeError);
    assert.throws(() => formatHoldings([-1]), RangeError);
  });
});

describe('parseHoldings', () => {
  it('reads what formatHoldings writes', () => {
    assert.deepEqual(parseHoldings(''), []);
    assert.deepEqual(parseHoldings('0'), [0]);
    assert.deepEqual(parseHoldings('255'), [255]);
    assert.deepEqual(parseHoldings('0-255'), ALL);
    assert.deepEqual(parseHoldings('0-2,40,42-44,255'), [0, 1, 2, 40, 42, 43, 44, 255]);
  });

  it('round-trips every other bucket, the longest text', () => {
    const everyOther = ALL.filter((bucket) => bucket % 2 === 1);
    const text = formatHoldings(everyOther);
    assert.deepEqual(parseHoldings(text), everyOther);
    assert.ok(text.length < 1024, String(text.length));
  });

  it('refuses out-of-range, reversed, overlapping, unsorted and non-canonical text, quoting it', () => {
    const refused = [
      '256', // out of range
      '250-256',
      '300-5',
      '12-3', // reversed
      '5-5', // a single bucket is written alone
      '1-5,3-8', // overlapping
      '1,1',
      '9,4', // unsorted
      '10-20,3',
      '1-3,4-9', // touching runs are written as one
      '3,4',
      '007', // junk
      '-1',
      '1-',
      '1,',
      ',1',
      '1,,2',
      ' 1',
      '1 ',
      '1;2',
      'all',
      '0x10',
      '1e2',
      '\u0661', // ARABIC-INDIC DIGIT ONE: a digit to Unicode, not an ASCII one
    ];
    for (const text of refused) {
      assert.throws(
        () => parseHoldings(text),
        (error: unknown) =>
          error instanceof HoldingsError &&
          error.text === text &&
          error.message.includes(JSON.stringify(text)) &&
          error.message.includes(HOLDINGS_ANNOTATION),
        JSON.stringify(text),
      );
    }
  });

  it('round-trips random sets', () => {
    const next = random(7);
    for (let round = 0; round < 200; round++) {
      const density = next();
      const buckets = ALL.filter(() => next() < density);
      assert.deepEqual(parseHoldings(formatHoldings(buckets)), buckets);
    }
  });
});

it('names the member Lease annotation', () => {
  assert.equal(HOLDINGS_ANNOTATION, 'sharding.loopwright.dev/buckets');
});
