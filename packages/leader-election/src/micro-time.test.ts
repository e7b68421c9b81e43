import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatMicroTime, MicroTimeError, parseMicroTime } from './micro-time.ts';

const GO_MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('formatMicroTime', () => {
  it('writes UTC with Z and exactly six fractional digits, as Go RFC3339Micro', () => {
    const micros = Date.UTC(2026, 10, 22, 5, 20, 1) * 1000 + 123_456;
    assert.equal(formatMicroTime(micros), '2026-11-22T05:20:01.123456Z');
  });

  it('zero-pads the fraction, including a whole second', () => {
    const second = Date.UTC(2026, 0, 2, 3, 4, 5) * 1000;
    assert.equal(formatMicroTime(second), '2026-01-02T03:04:05.000000Z');
    assert.equal(formatMicroTime(second + 7), '2026-01-02T03:04:05.000007Z');
    assert.equal(formatMicroTime(second + 120_000), '2026-01-02T03:04:05.120000Z');
  });

  it('truncates fractions of a microsecond instead of rounding into the next second', () => {
    assert.equal(formatMicroTime(5_999_999.9), '1970-01-01T00:00:05.999999Z');
  });

  it('handles times before 1970 (negative epoch values) with a positive fraction', () => {
    assert.equal(formatMicroTime(-1), '1969-12-31T23:59:59.999999Z');
    assert.equal(formatMicroTime(-1_500_000), '1969-12-31T23:59:58.500000Z');
  });

  it('always matches the MicroTime layout for a spread of times', () => {
    for (const micros of [
      0,
      1,
      999_999,
      1_000_000,
      1.7e15 + 1,
      Number.MAX_SAFE_INTEGER,
      253_402_300_799_000_000,
    ]) {
      assert.match(formatMicroTime(micros), GO_MICRO_TIME);
    }
  });

  it('rejects times RFC 3339 cannot express', () => {
    assert.throws(() => formatMicroTime(253_402_300_800_000_000), MicroTimeError); // year 10000
    assert.throws(() => formatMicroTime(Number.NaN), MicroTimeError);
    assert.throws(() => formatMicroTime(Number.POSITIVE_INFINITY), MicroTimeError);
  });
});

describe('parseMicroTime', () => {
  it('parses what the API server and Go clients write', () => {
    assert.equal(
      parseMicroTime('2026-11-22T05:20:01.123456Z'),
      Date.UTC(2026, 10, 22, 5, 20, 1) * 1000 + 123_456,
    );
  });

  it('round-trips with formatMicroTime without losing microseconds', () => {
    for (const text of [
      '2026-11-22T05:20:01.123456Z',
      '1969-12-31T23:59:59.999999Z',
      '0001-01-01T00:00:00.000000Z',
    ]) {
      assert.equal(formatMicroTime(parseMicroTime(text)), text);
    }
  });

  it('accepts other fraction lengths, truncating past microseconds', () => {
    const second = Date.UTC(2026, 10, 22, 5, 20, 1) * 1000;
    assert.equal(parseMicroTime('2026-11-22T05:20:01Z'), second);
    assert.equal(parseMicroTime('2026-11-22T05:20:01.5Z'), second + 500_000);
    assert.equal(parseMicroTime('2026-11-22T05:20:01.123Z'), second + 123_000);
    assert.equal(parseMicroTime('2026-11-22T05:20:01.123456789Z'), second + 123_456);
  });

  it('applies numeric offsets', () => {
    const utc = parseMicroTime('2026-11-22T05:20:01.000001Z');
    assert.equal(parseMicroTime('2026-11-22T07:20:01.000001+02:00'), utc);
    assert.equal(parseMicroTime('2026-11-21T23:50:01.000001-05:30'), utc);
  });

  it('rejects malformed and out-of-range timestamps', () => {
    for (const text of [
      '',
      '2026-11-22',
      '2026-11-22 05:20:01Z',
      '2026-11-22T05:20:01',
      '2026-11-22T05:20:01.Z',
      '2026-02-30T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-11-22T24:00:00Z',
      '2026-11-22T05:60:00Z',
      '2026-11-22T05:20:01+24:00',
      ' 2026-11-22T05:20:01Z',
    ]) {
      assert.throws(() => parseMicroTime(text), MicroTimeError, text);
    }
  });
});
