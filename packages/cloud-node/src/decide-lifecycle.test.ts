import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideLifecycle, notReadyDataMaxAgeMs, type ServerState } from './decide-lifecycle.ts';
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from './names.ts';
import type { Node } from './node.ts';

function node(
  ready: 'True' | 'False' | 'Unknown' | undefined,
  opts: { providerID?: string | undefined; taints?: string[] } = {},
): Node {
  return {
    metadata: { name: 'n' },
    spec: {
      providerID: 'providerID' in opts ? opts.providerID : 'hcloud://1',
      taints: (opts.taints ?? []).map((key) => ({ key, effect: 'NoSchedule' })),
    },
    status: { conditions: ready === undefined ? [] : [{ type: 'Ready', status: ready }] },
  };
}
const running: ServerState = { state: 'exists', server: { status: 'running' } };
const off: ServerState = { state: 'exists', server: { status: 'off' } };
const gone: ServerState = { state: 'gone' };
const unknown: ServerState = { state: 'unknown', reason: '503 unavailable' };
const notLookedUpGoneOff: readonly (ServerState | undefined)[] = [undefined, gone, off];

describe('decideLifecycle: the decision table', () => {
  it('Ready x every server state: never deletes, only removes the shutdown taint', () => {
    for (const server of [running, off, gone, unknown, undefined]) {
      assert.deepEqual(decideLifecycle(node('True'), server), { action: 'none', reason: 'Ready' });
      assert.deepEqual(decideLifecycle(node('True', { taints: [SHUTDOWN_TAINT] }), server), {
        action: 'remove-shutdown-taint',
      });
    }
  });

  for (const ready of ['False', 'Unknown', undefined] as const) {
    it(`Ready=${ready ?? 'missing'}: look up, then off -> taint, gone -> delete, unknown -> retry`, () => {
      assert.deepEqual(decideLifecycle(node(ready)), { action: 'look-up-server', serverID: 1 });
      assert.deepEqual(decideLifecycle(node(ready, { taints: [SHUTDOWN_TAINT] })), {
        action: 'look-up-server',
        serverID: 1,
      });
      assert.deepEqual(decideLifecycle(node(ready), running), {
        action: 'none',
        reason: 'server is running',
      });
      assert.deepEqual(decideLifecycle(node(ready), off), { action: 'add-shutdown-taint', serverID: 1 });
      assert.deepEqual(decideLifecycle(node(ready, { taints: [SHUTDOWN_TAINT] }), off), {
        action: 'none',
        reason: 'already tainted as shut down',
      });
      assert.deepEqual(decideLifecycle(node(ready), gone), { action: 'delete-node', serverID: 1 });
      assert.deepEqual(decideLifecycle(node(ready), unknown), { action: 'retry', reason: '503 unavailable' });
    });
  }

  it('the server id of a step is the providerID', () => {
    const n = node('False', { providerID: 'hcloud://4711' });
    assert.deepEqual(decideLifecycle(n), { action: 'look-up-server', serverID: 4711 });
    assert.deepEqual(decideLifecycle(n, gone), { action: 'delete-node', serverID: 4711 });
    assert.deepEqual(decideLifecycle(n, off), { action: 'add-shutdown-taint', serverID: 4711 });
  });

  it('other statuses (starting, stopping, migrating...) are left alone', () => {
    for (const status of ['starting', 'stopping', 'migrating', 'rebuilding', 'deleting', 'unknown'] as const)
      assert.deepEqual(
        decideLifecycle(node('False'), { state: 'exists', server: { status } }),
        { action: 'none', reason: `server is ${status}` },
        status,
      );
  });

  it('foreign, Robot, malformed or unset providerIDs are never acted on, nor looked up', () => {
    const cases: [string | undefined, string][] = [
      ['aws:///x/i-1', 'providerID aws:///x/i-1 is not a Hetzner Cloud server'],
      ['hcloud://x', 'providerID hcloud://x is not a Hetzner Cloud server'],
      ['hrobot://5', 'providerID hrobot://5 is a Robot server'],
      ['hcloud://bm-5', 'providerID hcloud://bm-5 is a Robot server'],
      [undefined, 'no providerID yet (not initialised)'],
      ['', 'no providerID yet (not initialised)'],
    ];
    for (const [providerID, reason] of cases)
      for (const ready of ['True', 'False'] as const)
        for (const state of notLookedUpGoneOff)
          assert.deepEqual(
            decideLifecycle(node(ready, { providerID, taints: [SHUTDOWN_TAINT] }), state),
            { action: 'none', reason },
            `${providerID} ${ready}`,
          );
  });

  it('a Node without spec has no providerID yet', () => {
    assert.deepEqual(decideLifecycle({ metadata: { name: 'n' } }, gone), {
      action: 'none',
      reason: 'no providerID yet (not initialised)',
    });
  });

  it('a Node still carrying the uninitialized taint is initialisation’s, whatever its server', () => {
    for (const ready of ['True', 'False'] as const)
      for (const state of notLookedUpGoneOff)
        assert.deepEqual(
          decideLifecycle(node(ready, { taints: [UNINITIALIZED_TAINT, SHUTDOWN_TAINT] }), state),
          { action: 'none', reason: 'not initialised yet' },
        );
  });
});

describe('notReadyDataMaxAgeMs: NotReady Nodes together cost at most one sweep per sweep period', () => {
  const paces = { monitorPeriodMs: 5000, sweepPeriodMs: 55_000 };

  it('500 servers (10 pages): even one NotReady Node is checked every sweep period (11 lookups > 10 pages)', () => {
    for (const notReady of [1, 9, 10, 500])
      assert.equal(notReadyDataMaxAgeMs({ notReady, sweepPages: 10, ...paces }), 55_000, String(notReady));
  });

  it('each monitor period while single lookups of all of them cost at most one sweep per sweep period', () => {
    // 2 Nodes x 11 periods = 22 lookups per 55 s: within a 22-page sweep, not within a 21-page one.
    assert.equal(notReadyDataMaxAgeMs({ notReady: 2, sweepPages: 22, ...paces }), 5000);
    assert.equal(notReadyDataMaxAgeMs({ notReady: 2, sweepPages: 21, ...paces }), 55_000);
    assert.equal(notReadyDataMaxAgeMs({ notReady: 3, sweepPages: 22, ...paces }), 55_000);
    assert.equal(notReadyDataMaxAgeMs({ notReady: 1, sweepPages: 100, ...paces }), 5000);
  });

  it('a monitor period as long as the sweep period or longer is kept: it is cheaper already', () => {
    for (const monitorPeriodMs of [55_000, 120_000])
      assert.equal(
        notReadyDataMaxAgeMs({ notReady: 500, sweepPages: 1, monitorPeriodMs, sweepPeriodMs: 55_000 }),
        monitorPeriodMs,
      );
  });
});
