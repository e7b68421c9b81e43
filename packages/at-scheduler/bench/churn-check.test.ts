/**
 * Each of the churn bench's checks fails on a record broken for it (a bench that cannot fail proves
 * nothing), and passes on a clean one. Run by the package's `bench` script before the churn bench.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkChurn,
  handoffWindow,
  overlaps,
  reconcileIntervals,
  type AtRecord,
  type ChurnInput,
} from './churn-check.ts';
import { Message, parseLog, type LogLine, type ReplicaLog } from './churn-log.ts';

const NS = 'bench';
const T = Date.parse('2026-11-29T15:00:00.000Z');

function reconcile(id: string, name: string, startMs: number, endMs?: number): LogLine[] {
  const lines: LogLine[] = [
    { ms: startMs, message: Message.reconciling, namespace: NS, name, reconcileID: id },
  ];
  if (endMs !== undefined)
    lines.push({ ms: endMs, message: Message.reconciled, namespace: NS, name, reconcileID: id });
  return lines;
}

function start(name: string, ms: number): LogLine[] {
  return [
    { ms, message: Message.claimed, namespace: NS, name },
    { ms: ms + 5, message: Message.started, namespace: NS, name },
  ];
}

function replica(
  identity: string,
  lines: LogLine[],
  options: { killed?: boolean; exitMs?: number } = {},
): ReplicaLog {
  return { identity, lines, exitMs: options.exitMs ?? T + 60_000, killed: options.killed ?? false };
}

function at(name: string, lateMs = 100, overrides: Partial<AtRecord> = {}): AtRecord {
  return {
    key: `${NS}/${name}`,
    scheduleMs: T,
    startMs: T + lateMs,
    ownPod: true,
    startedEvents: 1,
    ...overrides,
  };
}

/** at-0 by a, then handed to b; at-1 by b. Every invariant holds. */
function clean(): ChurnInput {
  return {
    logs: [
      replica('a', [...reconcile('r1', 'at-0', T + 90, T + 120), ...start('at-0', T + 100)]),
      replica('b', [
        ...reconcile('r2', 'at-0', T + 120, T + 130),
        ...reconcile('r3', 'at-1', T + 95, T + 140),
        ...start('at-1', T + 100),
      ]),
    ],
    ats: [at('at-0'), at('at-1')],
    handoffWindows: [],
    boundMs: 6000,
  };
}

describe('checkChurn', () => {
  it('finds nothing wrong in a clean record, and counts what it checked', () => {
    const report = checkChurn(clean());
    assert.deepEqual(report.failures, []);
    assert.equal(report.reconciles, 3);
    assert.equal(report.keysChecked, 2);
    assert.deepEqual(report.latenessMs, [100, 100]);
  });

  it('fails when two replicas reconcile one At at once', () => {
    const input = clean();
    input.logs = [...input.logs, replica('c', reconcile('r4', 'at-0', T + 110, T + 125))];
    const report = checkChurn(input);
    assert.equal(report.overlapping.length, 2);
    assert.match(report.failures.join('\n'), /at-0 reconciled by a .* and c .* at once/);
  });

  it("ends a killed replica's open reconcile at its exit, which then overlaps the next owner's", () => {
    const input = clean();
    input.logs = [
      replica('k', reconcile('r5', 'at-1', T + 50), { killed: true, exitMs: T + 100 }),
      ...input.logs,
    ];
    const report = checkChurn(input);
    assert.deepEqual(report.inFlightAtKill, [`${NS}/at-1`]);
    assert.match(report.failures.join('\n'), /at-1 reconciled by k .* open\] and b .* at once/);
  });

  it('fails when a gracefully stopped replica left a reconcile open (it drains first)', () => {
    const input = clean();
    input.logs = [...input.logs, replica('g', reconcile('r6', 'at-9', T + 10), { exitMs: T + 20 })];
    assert.match(checkChurn(input).failures.join('\n'), /g stopped gracefully with bench\/at-9's reconcile/);
  });

  it('fails on a reconciled line without its reconciling', () => {
    const input = clean();
    input.logs = [
      ...input.logs,
      replica('d', [{ ms: T, message: Message.reconciled, namespace: NS, name: 'at-0', reconcileID: 'x' }]),
    ];
    assert.match(checkChurn(input).failures.join('\n'), /1 'reconciled' lines without/);
  });

  it('fails when an At never started and was not in flight at the kill', () => {
    const input = clean();
    input.ats = [...input.ats, at('at-2', 0, { startMs: undefined, ownPod: false })];
    assert.match(checkChurn(input).failures.join('\n'), /bench\/at-2: never started/);
  });

  it('fails when the start is recorded but the pod is not the At’s own', () => {
    const input = clean();
    input.ats = [at('at-0'), at('at-1', 100, { ownPod: false })];
    assert.match(checkChurn(input).failures.join('\n'), /bench\/at-1: never started .*own pod: false/);
  });

  it('excuses an At the killed replica had in flight, and only that one', () => {
    const input = clean();
    input.logs = [...input.logs, replica('k', reconcile('r7', 'at-3', T), { killed: true, exitMs: T + 1 })];
    input.ats = [...input.ats, at('at-3', 0, { startMs: undefined, ownPod: false })];
    const report = checkChurn(input);
    assert.deepEqual(report.failures, []);
    assert.deepEqual(report.lostInFlight, [`${NS}/at-3`]);
  });

  it('fails when the logs show two creates, a create that found the pod, or two claims', () => {
    for (const extra of [
      [{ ms: T + 200, message: Message.started, namespace: NS, name: 'at-1' }],
      [{ ms: T + 200, message: Message.createdBefore, namespace: NS, name: 'at-1' }],
      [{ ms: T + 200, message: Message.claimed, namespace: NS, name: 'at-1' }],
      [{ ms: T + 200, message: Message.reclaimed, namespace: NS, name: 'at-1' }],
    ]) {
      const input = clean();
      input.logs = [...input.logs, replica('e', extra)];
      assert.match(checkChurn(input).failures.join('\n'), /bench\/at-1: not started exactly once/);
    }
  });

  it('fails on two Started Events', () => {
    const input = clean();
    input.ats = [at('at-0'), at('at-1', 100, { startedEvents: 2 })];
    assert.match(
      checkChurn(input).failures.join('\n'),
      /at-1: not started exactly once \(2 Started Events\)/,
    );
  });

  it('allows a second claim of an At in flight at the kill (its pod never created), as a reclaim', () => {
    const input = clean();
    input.logs = [
      ...input.logs,
      replica(
        'k',
        [...reconcile('r8', 'at-4', T), { ms: T + 1, message: Message.claimed, namespace: NS, name: 'at-4' }],
        {
          killed: true,
          exitMs: T + 2,
        },
      ),
      replica('f', [
        ...reconcile('r9', 'at-4', T + 6000, T + 6010),
        { ms: T + 6001, message: Message.reclaimed, namespace: NS, name: 'at-4' },
        ...start('at-4', T + 6002),
      ]),
    ];
    input.ats = [...input.ats, at('at-4', 5900)];
    const report = checkChurn(input);
    assert.deepEqual(report.failures, []);
    assert.deepEqual(report.reclaimedAfterKill, [`${NS}/at-4`]);
  });

  it('fails when an At started later than the bound', () => {
    const input = clean();
    input.ats = [at('at-0'), at('at-1', 6001)];
    assert.match(checkChurn(input).failures.join('\n'), /later than the bound 6000 ms: bench\/at-1: 6001 ms/);
  });

  it('fails when there is nothing to check', () => {
    assert.match(checkChurn({ ...clean(), ats: [] }).failures.join('\n'), /no Ats/);
    assert.match(checkChurn({ ...clean(), logs: [] }).failures.join('\n'), /no 'reconciling' lines/);
  });

  it('puts Ats due in a hand-off window in the hand-off figures', () => {
    const input = clean();
    input.ats = [at('at-0', 50), { ...at('at-1', 4000), scheduleMs: T + 10_000, startMs: T + 14_000 }];
    input.handoffWindows = [{ label: 'kill', startMs: T + 9000, endMs: T + 12_000 }];
    assert.deepEqual(checkChurn(input).handoffLatenessMs, [4000]);
  });
});

describe('overlaps', () => {
  it('leaves intervals that only touch, and one replica’s own sequence, alone', () => {
    const a = { replica: 'a', key: 'k', startMs: 0, endMs: 10, open: false };
    assert.deepEqual(overlaps([a, { ...a, replica: 'b', startMs: 10, endMs: 20 }]), []);
    assert.deepEqual(overlaps([a, { ...a, startMs: 5, endMs: 20 }]), []);
    assert.equal(overlaps([a, { ...a, replica: 'b', startMs: 9, endMs: 20 }]).length, 1);
    assert.equal(
      overlaps([
        { ...a, startMs: 0, endMs: 100 },
        { ...a, replica: 'b', startMs: 50, endMs: 60 },
      ]).length,
      1,
    );
  });
});

describe('handoffWindow', () => {
  it('runs from the action (less the lead) to the last hand-off line before the next action', () => {
    const logs = [
      replica('a', [
        { ms: T + 1000, message: 'took buckets', component: 'sharding' },
        { ms: T + 3000, message: 'released buckets', component: 'sharding' },
        { ms: T + 9000, message: 'took buckets', component: 'sharding' },
      ]),
    ];
    assert.deepEqual(handoffWindow('x', logs, T, T + 5000, 500), {
      label: 'x',
      startMs: T - 500,
      endMs: T + 3000,
    });
  });
});

describe('parseLog and reconcileIntervals', () => {
  it('reads JSON lines with their timestamps, skips the rest, and pairs reconciles by ID', () => {
    const text = [
      'at-scheduler: a line on stderr',
      JSON.stringify({
        level: 'debug',
        message: 'reconciling',
        namespace: NS,
        name: 'at-0',
        reconcileID: 'r',
        timestamp: '2026-11-29T15:00:00.010Z',
      }),
      JSON.stringify({
        level: 'debug',
        message: 'reconciled',
        namespace: NS,
        name: 'at-0',
        reconcileID: 'r',
        timestamp: '2026-11-29T15:00:00.020Z',
      }),
      '{"message":"cut by the ki',
    ].join('\n');
    const lines = parseLog(text);
    assert.equal(lines.length, 2);
    const { intervals } = reconcileIntervals(replica('a', lines));
    assert.deepEqual(intervals, [
      { replica: 'a', key: `${NS}/at-0`, startMs: T + 10, endMs: T + 20, open: false },
    ]);
  });
});
