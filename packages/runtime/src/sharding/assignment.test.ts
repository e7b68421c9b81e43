import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assign } from './assignment.ts';
import { formatHoldings } from './holdings.ts';
import { random } from './random.test-support.ts';
import { BUCKETS } from './space.ts';

/** Bucket -> its member, to compare two assignments bucket by bucket. */
function owners(assignment: ReadonlyMap<string, readonly number[]>): string[] {
  const owner: string[] = [];
  for (const [member, buckets] of assignment) for (const bucket of buckets) owner[bucket] = member;
  return owner;
}

function moved(before: string[], after: string[]): number {
  return before.filter((member, bucket) => after[bucket] !== member).length;
}

/** Pod names as a Deployment (`name-<template hash>-<5 chars>`) or StatefulSet (`name-<ordinal>`) makes. */
function podNames(next: () => number): (ordinal: number) => string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const chars = (length: number): string =>
    Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
  if (next() < 0.5) return (ordinal) => `hcloud-controller-${ordinal}`;
  const templateHash = chars(10);
  return () => `mailgun-controller-${templateHash}-${chars(5)}`;
}

/** assign(['ctrl-0', 'ctrl-1', 'ctrl-2']) as computed when the algorithm was chosen. */
const PINNED = [
  'ctrl-0: 5,9,13,15,17,19,25,27,29,36,41-43,52,59,61,65,67,69,71,73,79,81-82,86,91,93-94,96,98,100,102,104-105,108,113,116,118-119,123-125,128,134,138,141-142,145,149-151,153,159-160,176-177,179,183-185,189-190,192,195,204,206,210-211,214-215,217,220-221,225,229,231-232,234,236,238,241,243-246',
  'ctrl-1: 0,2,4,6-7,10,14,16,18,20-22,24,31,33-35,37,40,44,46,49-51,53-54,56-57,60,62-64,70,74,77-78,84,88,90,97,99,106,110,114-115,126-127,130-132,135-137,139-140,144,146,148,154,156,161-163,166-168,171,173-175,181-182,191,194,196,201-203,205,207-209,212,222-224',
  'ctrl-2: 1,3,8,11-12,23,26,28,30,32,38-39,45,47-48,55,58,66,68,72,75-76,80,83,85,87,89,92,95,101,103,107,109,111-112,117,120-122,129,133,143,147,152,155,157-158,164-165,169-170,172,178,180,186-188,193,197-200,213,216,218-219,226-228,230,233,235,237,239-240,242,247-255',
];

describe('assign', () => {
  it('gives nothing to no members and everything to one', () => {
    assert.equal(assign([]).size, 0);
    assert.deepEqual(
      [...assign(['only'])],
      [['only', Array.from({ length: BUCKETS }, (_, bucket) => bucket)]],
    );
  });

  it('depends only on the set of members, not their order or duplicates', () => {
    const members = ['ctrl-2', 'ctrl-0', 'ctrl-1', 'other-5f7d9c-x2kqp'];
    const expected = [...assign(members)];
    assert.deepEqual([...assign([...members].reverse())], expected);
    assert.deepEqual([...assign([...members, 'ctrl-0', 'ctrl-2'])], expected);
    assert.deepEqual([...assign(['ctrl-1', 'other-5f7d9c-x2kqp', 'ctrl-1', 'ctrl-2', 'ctrl-0'])], expected);
  });

  it('gives every bucket to exactly one member, sorted, floor or ceil of 256/n each', () => {
    const next = random(1);
    for (const n of [1, 2, 3, 5, 7, 10, 17, 100, 255, 256, 257, 300]) {
      const name = podNames(next);
      const assignment = assign(Array.from({ length: n }, (_, ordinal) => name(ordinal)));
      assert.equal(assignment.size, n);
      const all = [...assignment.values()].flat().sort((a, b) => a - b);
      assert.deepEqual(
        all,
        Array.from({ length: BUCKETS }, (_, bucket) => bucket),
        `n = ${n}`,
      );
      for (const [member, buckets] of assignment) {
        assert.deepEqual(
          buckets,
          [...buckets].sort((a, b) => a - b),
          member,
        );
        assert.ok(
          buckets.length === Math.floor(BUCKETS / n) || buckets.length === Math.ceil(BUCKETS / n),
          `${member} has ${buckets.length} buckets of 256 among ${n}`,
        );
      }
    }
  });

  it('computes what it did when written: replicas of different versions must agree', () => {
    const assignment = assign(['ctrl-0', 'ctrl-1', 'ctrl-2']);
    assert.deepEqual(
      [...assignment].map(([member, buckets]) => `${member}: ${formatHoldings(buckets)}`),
      PINNED,
    );
  });

  it('moves few more buckets than the least possible when one member joins or leaves', () => {
    // The least possible movement is the joining member's new share, or the leaving member's old one.
    // Sorted members taking contiguous slices measure 2.8x / 2.4x on average and 5.5x at worst, `bucket
    // mod n` 5.5x / 5.0x and 10x: both fail these bounds. (assignment.ts has the measured figures.)
    const next = random(39);
    const joins: number[] = [];
    const leaves: number[] = [];
    for (let n = 1; n <= 10; n++) {
      for (let set = 0; set < 30; set++) {
        const name = podNames(next);
        const members = Array.from({ length: n }, (_, ordinal) => name(ordinal));
        const before = owners(assign(members));

        const joining = name(n);
        const joined = assign([...members, joining]);
        joins.push(moved(before, owners(joined)) / (joined.get(joining)?.length ?? 0));

        if (n === 1) continue;
        const leaving = members[Math.floor(next() * n)] ?? '';
        const left = assign(members.filter((member) => member !== leaving));
        leaves.push(moved(before, owners(left)) / (assign(members).get(leaving)?.length ?? 0));
      }
    }
    const mean = (ratios: number[]): number => ratios.reduce((sum, ratio) => sum + ratio, 0) / ratios.length;
    assert.ok(mean(joins) <= 1.3, `joining: ${mean(joins)}x on average`);
    assert.ok(mean(leaves) <= 1.3, `leaving: ${mean(leaves)}x on average`);
    assert.ok(Math.max(...joins) <= 2, `joining: ${Math.max(...joins)}x at worst`);
    assert.ok(Math.max(...leaves) <= 2, `leaving: ${Math.max(...leaves)}x at worst`);
  });
});
