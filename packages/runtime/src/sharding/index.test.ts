import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  assign,
  bucketOf,
  bucketRange,
  BUCKETS,
  fnv1a64,
  formatHoldings,
  fraction,
  hashHex,
  HOLDINGS_ANNOTATION,
  HoldingsError,
  mergeRanges,
  parseHoldings,
  planHandoff,
  shardSelector,
  type HandoffInput,
  type HandoffPlan,
  type HashRange,
  type MemberView,
  type ShardField,
  type Waiting,
} from './index.ts';

const FIELD: ShardField = 'object.metadata.uid';

/** The member Leases' annotations, by holder identity. */
type Leases = Map<string, Record<string, string>>;

function holdingsOf(annotations: Record<string, string>): number[] {
  return parseHoldings(annotations[HOLDINGS_ANNOTATION] ?? '');
}

function view(leases: Leases): MemberView[] {
  return [...leases].map(([identity, annotations]) => ({
    identity,
    expired: false,
    holdings: holdingsOf(annotations),
  }));
}

/** One replica's tick as the Manager will run it: plan, then write what it keeps and takes. */
function tick(leases: Leases, me: string): HandoffPlan {
  const annotations = leases.get(me) ?? {};
  const input: HandoffInput = { me, held: holdingsOf(annotations), members: view(leases) };
  const plan = planHandoff(input);
  annotations[HOLDINGS_ANNOTATION] = formatHoldings([...plan.keep, ...plan.take]);
  return plan;
}

function blockers(waiting: readonly Waiting[]): string[] {
  return [...new Set(waiting.flatMap(({ holders }) => holders))];
}

function contains(ranges: readonly HashRange[], hash: bigint): boolean {
  return ranges.some(({ start, end }) => start <= hash && hash < end);
}

it('hands part of the space to a member joining a ring of one, through the surface a caller uses', () => {
  const leases: Leases = new Map([
    ['ctrl-0', { [HOLDINGS_ANNOTATION]: '0-255' }],
    ['ctrl-1', { [HOLDINGS_ANNOTATION]: '' }],
  ]);
  const target = assign([...leases.keys()]);

  assert.deepEqual(blockers(tick(leases, 'ctrl-1').waitingFor), ['ctrl-0']);
  assert.deepEqual(tick(leases, 'ctrl-0').release, target.get('ctrl-1'));
  assert.deepEqual(tick(leases, 'ctrl-1').take, target.get('ctrl-1'));

  let covered = 0;
  for (const [identity, annotations] of leases) {
    const held = holdingsOf(annotations);
    assert.deepEqual(held, target.get(identity));
    covered += fraction(held);
    assert.equal(shardSelector(FIELD, held)?.split(' || ').length, mergeRanges(held).length);
  }
  assert.equal(covered, 1);

  // An object belongs to the one replica whose ranges (its selector's terms) hold its uid's hash.
  const uid = '3f2b8c1e-6d4a-4f7b-9e2c-1a5d8b0c7e91';
  const hash = fnv1a64(uid);
  assert.equal(hashHex(uid), 'b2820180bb2b3cba');
  const bucket = bucketOf(hash);
  assert.ok(bucket < BUCKETS);
  assert.ok(contains([bucketRange(bucket)], hash));
  for (const [identity, annotations] of leases) {
    const held = holdingsOf(annotations);
    assert.equal(contains(mergeRanges(held), hash), held.includes(bucket), identity);
  }
  assert.throws(() => parseHoldings('junk'), HoldingsError);
});
