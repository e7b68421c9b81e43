import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSchedule } from './schedule.ts';

const ms = (value: string): number => {
  const parsed = parseSchedule(value);
  assert.ok(parsed.ok, `${value} should parse`);
  return parsed.epochMs;
};

describe('parseSchedule', () => {
  it("accepts the book's layout and full RFC 3339: offsets, fractions, lower case", () => {
    const base = Date.UTC(2019, 3, 12, 10, 12, 0);
    assert.equal(ms('2019-04-12T10:12:00Z'), base);
    assert.equal(ms('2019-04-12t10:12:00z'), base);
    assert.equal(ms('2019-04-12T12:12:00+02:00'), base);
    assert.equal(ms('2019-04-12T05:42:00-04:30'), base);
    assert.equal(ms('2019-04-12T10:12:00.250Z'), base + 250);
    assert.equal(ms('2019-04-12 10:12:00Z'), base);
  });

  it('reads unambiguous non-RFC 3339 values stored before the schema validated them; no zone means UTC', () => {
    const base = Date.UTC(2019, 3, 12, 10, 12, 0);
    assert.equal(ms('2019-04-12T12:12:00+0200'), base);
    assert.equal(ms('2019-04-12T10:12Z'), base);
    assert.equal(ms('2019-04-12T10:12:00'), base);
  });

  it('rounds sub-millisecond fractions up: never early', () => {
    assert.equal(ms('2019-04-12T10:12:00.000000001Z'), Date.UTC(2019, 3, 12, 10, 12, 0) + 1);
  });

  it('handles leap days and years before 100 exactly', () => {
    assert.equal(ms('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
    assert.equal(parseSchedule('2023-02-29T00:00:00Z').ok, false);
    assert.equal(new Date(ms('0050-06-01T00:00:00Z')).getUTCFullYear(), 50);
  });

  it('rejects everything else with a message naming the value', () => {
    for (const bad of [
      'tomorrow',
      '',
      '2019-04-12',
      '2019-13-01T00:00:00Z',
      '2019-04-31T00:00:00Z',
      '2019-04-12T24:00:00Z',
      '2019-04-12T10:12:00+25:00',
      ' 2019-04-12T10:12:00Z',
      '1555063920',
    ]) {
      const parsed = parseSchedule(bad);
      assert.ok(!parsed.ok, bad);
      assert.ok(parsed.error.includes('spec.schedule'));
    }
    assert.equal(parseSchedule(42).ok, false);
  });
});
