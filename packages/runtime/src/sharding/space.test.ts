import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BUCKETS,
  bucketOf,
  bucketRange,
  bucketRuns,
  fraction,
  mergeRanges,
  normalizeBuckets,
  shardSelector,
  type ShardField,
} from './space.ts';
import { random } from './random.test-support.ts';

const TWO_TO_64 = 1n << 64n;
const ALL = Array.from({ length: BUCKETS }, (_, bucket) => bucket);

interface Requirement {
  field: string;
  start: string;
  end: string;
}

/**
 * kube-apiserver's rules for a shardSelector (k8s.io/apiserver v0.36.3 pkg/sharding/parser.go), for the
 * form this folder writes: `shardRange(field, 'start', 'end')` terms joined with ` || `; field
 * `object.metadata.uid` or `object.metadata.namespace`, the same in every term; each bound `0x` and 1 to
 * 17 lowercase hex digits, exactly 16 unless it is `0x10000000000000000`; start < end by `HexLess`.
 */
function parseSelector(selector: string): Requirement[] {
  const requirements = selector.split(' || ').map((term) => {
    const match = /^shardRange\(([a-z.]+), '([^']*)', '([^']*)'\)$/.exec(term);
    assert.ok(match, `not a shardRange term: ${term}`);
    const [, field = '', start = '', end = ''] = match;
    assert.ok(field === 'object.metadata.uid' || field === 'object.metadata.namespace', field);
    for (const bound of [start, end]) {
      assert.ok(bound.startsWith('0x'), `no 0x prefix: ${bound}`);
      const digits = bound.slice(2);
      assert.match(digits, /^[0-9a-f]{1,17}$/, bound);
      if (digits.length === 17) assert.equal(bound, '0x10000000000000000');
      else assert.equal(digits.length, 16, bound);
    }
    assert.ok(hexLess(start, end), `start ${start} is not below end ${end}`);
    return { field, start, end };
  });
  for (const { field } of requirements) assert.equal(field, requirements[0]?.field);
  return requirements;
}

/** apimachinery's `HexLess`: how the server compares a `0x` hash with the bounds. */
function hexLess(a: string, b: string): boolean {
  return a.length === b.length ? a < b : a.length < b.length;
}

/** apimachinery's `shardSelector.Matches` for an object whose field hashes to `hash`. */
function serverMatches(requirements: Requirement[], hash: bigint): boolean {
  const hex = `0x${hash.toString(16).padStart(16, '0')}`;
  return requirements.some(({ start, end }) => !hexLess(hex, start) && hexLess(hex, end));
}

describe('bucketOf', () => {
  it('is the top 8 bits of the hash', () => {
    assert.equal(bucketOf(0n), 0);
    assert.equal(bucketOf((1n << 56n) - 1n), 0);
    assert.equal(bucketOf(1n << 56n), 1);
    assert.equal(bucketOf(0xcbf29ce484222325n), 0xcb);
    assert.equal(bucketOf(TWO_TO_64 - 1n), 255);
  });

  it('rejects what is not a 64-bit hash', () => {
    assert.throws(() => bucketOf(-1n), RangeError);
    assert.throws(() => bucketOf(TWO_TO_64), RangeError);
  });
});

describe('bucketRange', () => {
  it('covers the first, a middle and the last bucket, ending at 2^64', () => {
    assert.deepEqual(bucketRange(0), { start: 0n, end: 1n << 56n });
    assert.deepEqual(bucketRange(0x80), { start: 0x80n << 56n, end: 0x81n << 56n });
    assert.deepEqual(bucketRange(255), { start: 255n << 56n, end: TWO_TO_64 });
  });

  it('is the inverse of bucketOf at both ends of every bucket', () => {
    for (const bucket of ALL) {
      const { start, end } = bucketRange(bucket);
      assert.equal(bucketOf(start), bucket);
      assert.equal(bucketOf(end - 1n), bucket);
      assert.equal(end - start, 1n << 56n);
    }
  });

  it('rejects what is not a bucket', () => {
    for (const bucket of [-1, 256, 1.5, Number.NaN]) assert.throws(() => bucketRange(bucket), RangeError);
  });
});

describe('normalizeBuckets and bucketRuns', () => {
  it('sort, drop duplicates and reject non-buckets', () => {
    assert.deepEqual(normalizeBuckets([5, 1, 5, 255, 0, 1]), [0, 1, 5, 255]);
    assert.deepEqual(normalizeBuckets(new Set<number>()), []);
    assert.throws(() => normalizeBuckets([0, 256]), RangeError);
    assert.throws(() => normalizeBuckets([-0.5]), RangeError);
  });

  it('join consecutive buckets into inclusive runs', () => {
    assert.deepEqual(bucketRuns([]), []);
    assert.deepEqual(bucketRuns([7]), [[7, 7]]);
    assert.deepEqual(bucketRuns([3, 1, 2, 9, 255, 254, 2]), [
      [1, 3],
      [9, 9],
      [254, 255],
    ]);
    assert.deepEqual(bucketRuns(ALL), [[0, 255]]);
  });
});

describe('mergeRanges', () => {
  it('returns nothing for no buckets and one range for all', () => {
    assert.deepEqual(mergeRanges([]), []);
    assert.deepEqual(mergeRanges(ALL), [{ start: 0n, end: TWO_TO_64 }]);
  });

  it('returns the fewest sorted ranges for unsorted, duplicate, non-contiguous input', () => {
    assert.deepEqual(mergeRanges([255, 2, 0, 1, 1, 254, 10]), [
      { start: 0n, end: 3n << 56n },
      { start: 10n << 56n, end: 11n << 56n },
      { start: 254n << 56n, end: TWO_TO_64 },
    ]);
  });
});

describe('shardSelector', () => {
  it('is undefined for no buckets: no selector matches nothing', () => {
    assert.equal(shardSelector('object.metadata.uid', []), undefined);
  });

  it('writes one term for all buckets, ending at 0x10000000000000000', () => {
    assert.equal(
      shardSelector('object.metadata.uid', ALL),
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
    );
  });

  it('writes bucket 0 and bucket 255 with 16-digit bounds, except 2^64', () => {
    assert.equal(
      shardSelector('object.metadata.namespace', [0]),
      "shardRange(object.metadata.namespace, '0x0000000000000000', '0x0100000000000000')",
    );
    assert.equal(
      shardSelector('object.metadata.uid', [255]),
      "shardRange(object.metadata.uid, '0xff00000000000000', '0x10000000000000000')",
    );
  });

  it('writes one term per run, sorted, for unsorted and duplicate input', () => {
    assert.equal(
      shardSelector('object.metadata.uid', [200, 1, 0, 200, 0x7f]),
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x0200000000000000') || " +
        "shardRange(object.metadata.uid, '0x7f00000000000000', '0x8000000000000000') || " +
        "shardRange(object.metadata.uid, '0xc800000000000000', '0xc900000000000000')",
    );
  });

  it('passes the parser rules and selects exactly the given buckets, for random sets', () => {
    const next = random(39);
    const fields: ShardField[] = ['object.metadata.uid', 'object.metadata.namespace'];
    for (let round = 0; round < 300; round++) {
      const density = next();
      const buckets = ALL.filter(() => next() < density);
      const field = fields[round % 2] ?? 'object.metadata.uid';
      const selector = shardSelector(field, buckets);
      if (buckets.length === 0) {
        assert.equal(selector, undefined);
        continue;
      }
      assert.ok(selector !== undefined);
      const requirements = parseSelector(selector);
      assert.equal(requirements.length, mergeRanges(buckets).length);
      for (const requirement of requirements) assert.equal(requirement.field, field);
      for (const bucket of ALL) {
        const { start, end } = bucketRange(bucket);
        const held = buckets.includes(bucket);
        assert.equal(serverMatches(requirements, start), held, `${selector} at start of ${bucket}`);
        assert.equal(serverMatches(requirements, end - 1n), held, `${selector} at end of ${bucket}`);
      }
    }
  });

  it('stays far below the parser size limit at its longest, every other bucket', () => {
    const everyOther = ALL.filter((bucket) => bucket % 2 === 0);
    const selector = shardSelector('object.metadata.namespace', everyOther) ?? '';
    assert.equal(parseSelector(selector).length, 128);
    assert.ok(selector.length < 12_000, String(selector.length));
  });

  it('the validator rejects what the parser rejects', () => {
    const bad = [
      "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
      "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')",
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x80000000000000000')",
      "shardRange(object.metadata.uid, '0x000000000000000A', '0x8000000000000000')",
      "shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')",
      "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || " +
        "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
    ];
    for (const selector of bad) assert.throws(() => parseSelector(selector), assert.AssertionError, selector);
  });
});

describe('fraction', () => {
  it('is the share of the space, duplicates counted once', () => {
    assert.equal(fraction([]), 0);
    assert.equal(fraction([0]), 1 / 256);
    assert.equal(fraction([3, 3, 4]), 2 / 256);
    assert.equal(fraction(ALL), 1);
  });
});
