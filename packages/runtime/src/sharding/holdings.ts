/**
 * What a member holds, as it writes it in its member Lease: the other replicas read it to know which
 * buckets are taken, so a value they cannot read must never be mistaken for a smaller one.
 */
import { BUCKETS, bucketRuns } from './space.ts';

/** The member Lease annotation that carries {@link formatHoldings}' text. */
export const HOLDINGS_ANNOTATION = 'sharding.loopwright.dev/buckets';

/** An annotation value {@link parseHoldings} refuses; the message quotes it. */
export class HoldingsError extends Error {
  override readonly name = 'HoldingsError';
  readonly text: string;
  constructor(text: string, problem: string) {
    super(`invalid ${HOLDINGS_ANNOTATION} ${JSON.stringify(text)}: ${problem}`);
    this.text = text;
  }
}

/**
 * Sorted inclusive runs in decimal, comma-separated: `0-12,40,42-255`; a run of one bucket is the bucket
 * alone, and nothing is the empty string. @throws RangeError for what is not a bucket.
 */
export function formatHoldings(buckets: Iterable<number>): string {
  return bucketRuns(buckets)
    .map(([first, last]) => (first === last ? String(first) : `${first}-${last}`))
    .join(',');
}

/** A decimal bucket number without leading zeros (`0` itself aside). */
const RUN = /^(0|[1-9]\d*)(?:-(0|[1-9]\d*))?$/;

/**
 * The sorted buckets in a {@link formatHoldings} text. Strict: only the form formatHoldings writes is
 * accepted, so `parseHoldings(text)` succeeds exactly when `formatHoldings` of its result gives `text`
 * back. A run of one written `5-5`, and runs that touch (`1-3,4-9`), are refused as well as reversed,
 * overlapping and unsorted ones: they cannot come from a replica that works, so one that wrote them is
 * better treated as holding anything.
 * @throws HoldingsError
 */
export function parseHoldings(text: string): number[] {
  if (text === '') return [];
  const buckets: number[] = [];
  let previous = -2;
  for (const run of text.split(',')) {
    const match = RUN.exec(run);
    if (match === null) throw new HoldingsError(text, `${JSON.stringify(run)} is not a bucket or a range`);
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    if (first >= BUCKETS || last >= BUCKETS) {
      throw new HoldingsError(text, `${run}: buckets go from 0 to ${BUCKETS - 1}`);
    }
    if (match[2] !== undefined && last <= first) {
      throw new HoldingsError(text, `${run}: a range goes from a lower to a higher bucket`);
    }
    if (first <= previous) throw new HoldingsError(text, `${run} overlaps or precedes the range before it`);
    if (first === previous + 1) throw new HoldingsError(text, `${run} continues the range before it`);
    for (let bucket = first; bucket <= last; bucket++) buckets.push(bucket);
    previous = last;
  }
  return buckets;
}
