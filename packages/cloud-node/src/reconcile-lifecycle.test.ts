import type { ServerStatus } from '@loopwright/hcloud';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from 'winston';
import { capturingLogger, conflict, FakeNodeApi, request, server } from './fake-node-api.test-support.ts';
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from './names.ts';
import type { Node, Taint } from './node.ts';
import { EventReason } from './reasons.ts';
import { createLifecycleReconciler } from './reconcile-lifecycle.ts';
import type { Lookup } from './server-directory.ts';

const NOW = 1_000_000;
const MONITOR_MS = 5000;
const SWEEP_MS = 55_000;
const shutdown: Taint = { key: SHUTDOWN_TAINT, effect: 'NoSchedule' };
const other: Taint = { key: 'other', effect: 'NoExecute' };

function node(
  ready: 'True' | 'False' | 'Unknown' | undefined,
  options: { providerID?: string | undefined; taints?: Taint[]; resourceVersion?: string } = {},
): Node {
  return {
    metadata: { name: 'worker-1', uid: 'uid-1', resourceVersion: options.resourceVersion ?? '7' },
    spec: {
      ...('providerID' in options ? { providerID: options.providerID } : { providerID: 'hcloud://42' }),
      taints: options.taints ?? [],
    },
    status: { conditions: ready === undefined ? [] : [{ type: 'Ready', status: ready }] },
  };
}

/**
 * A project of 100 pages of servers unless `pages` says otherwise: there one NotReady Node is checked
 * each monitor period, as HCCM does (see 'the pace of the checks' for the others).
 */
function setUp(options: { pages?: number; sweepPeriodMs?: number } = {}) {
  const api = new FakeNodeApi();
  api.pages = options.pages ?? 100;
  const reconcile = createLifecycleReconciler({
    api,
    nodeMonitorPeriodMs: MONITOR_MS,
    ...(options.sweepPeriodMs === undefined ? {} : { notReadySweepPeriodMs: options.sweepPeriodMs }),
    now: () => NOW,
  });
  return {
    api,
    reconcile: (n: Node | undefined, log?: Logger, name = 'worker-1') => reconcile(request(n, name, log)),
  };
}

const withStatus = (status: ServerStatus): Lookup => ({
  state: 'exists',
  server: server({ status }),
  fetchedAt: NOW - 2000,
});
const gone: Lookup = { state: 'gone', fetchedAt: NOW - 1000 };
const unknowns: Lookup[] = [
  { state: 'unknown', retryAfterMs: 4000, reason: '503 unavailable: down', cause: 'api-error' },
  { state: 'unknown', retryAfterMs: 4000, reason: '401 unauthorized: revoked', cause: 'api-error' },
  { state: 'unknown', retryAfterMs: 4000, reason: 'API budget: waiting', cause: 'budget' },
];
const LOOKUP = {
  call: 'lookupServer',
  ref: { id: 42 },
  options: { maxAgeMs: MONITOR_MS, priority: 'urgent' },
};

describe('createLifecycleReconciler: Nodes not looked up', () => {
  it('a deleted Node: no call at all', async () => {
    const { api, reconcile } = setUp();
    assert.equal(await reconcile(undefined), undefined);
    assert.deepEqual(api.calls, []);
  });

  for (const providerID of ['aws:///x/i-1', 'hrobot://5', 'hcloud://bm-5', 'hcloud://x', undefined])
    it(`providerID ${providerID ?? 'unset'}: no call at all, Ready or not, tainted or not`, async () => {
      const { api, reconcile } = setUp();
      api.lookup = gone;
      for (const ready of ['True', 'False'] as const)
        assert.equal(await reconcile(node(ready, { providerID, taints: [shutdown] })), undefined);
      assert.deepEqual(api.calls, []);
    });

  it('still uninitialised: no call at all (initialisation’s job)', async () => {
    const { api, reconcile } = setUp();
    api.lookup = gone;
    const taint: Taint = { key: UNINITIALIZED_TAINT, effect: 'NoSchedule' };
    assert.equal(await reconcile(node('False', { taints: [taint] })), undefined);
    assert.deepEqual(api.calls, []);
  });

  it('Ready without the shutdown taint: no call, no requeue (its next change brings it back)', async () => {
    const { api, reconcile } = setUp();
    api.lookup = gone;
    assert.equal(await reconcile(node('True', { taints: [other] })), undefined);
    assert.deepEqual(api.calls, []);
  });

  it('Ready with the shutdown taint: the taint goes, the others stay; no look-up', async () => {
    const { api, reconcile } = setUp();
    api.lookup = gone;
    assert.equal(await reconcile(node('True', { taints: [other, shutdown] })), undefined);
    assert.deepEqual(api.calls, [
      { call: 'patchNode', name: 'worker-1', patch: { spec: { taints: [other] } }, resourceVersion: '7' },
    ]);
  });

  it('Ready with the shutdown taint, but NotReady again on the fresh read after a conflict: the taint stays', async () => {
    const { api, reconcile } = setUp();
    api.patchErrors.push(conflict());
    api.live.set('worker-1', node('False', { taints: [shutdown], resourceVersion: '8' }));
    assert.equal(await reconcile(node('True', { taints: [shutdown] })), undefined);
    assert.deepEqual(
      api.calls.map((c) => c.call),
      ['patchNode', 'getNode'],
    );
  });
});

describe('createLifecycleReconciler: NotReady Nodes', () => {
  for (const ready of ['False', 'Unknown', undefined] as const)
    it(`Ready=${ready ?? 'missing'}, server running: looked up, nothing written, back when the data expires`, async () => {
      const { api, reconcile } = setUp();
      api.lookup = withStatus('running');
      assert.deepEqual(await reconcile(node(ready)), { requeueAfterMs: MONITOR_MS - 2000 + 1 });
      assert.deepEqual(api.calls, [LOOKUP]);
    });

  it('server off: the shutdown taint is added to the Node’s taints', async () => {
    const { api, reconcile } = setUp();
    api.lookup = withStatus('off');
    assert.deepEqual(await reconcile(node('False', { taints: [other] })), {
      requeueAfterMs: MONITOR_MS - 2000 + 1,
    });
    assert.deepEqual(api.calls, [
      LOOKUP,
      {
        call: 'patchNode',
        name: 'worker-1',
        patch: { spec: { taints: [other, shutdown] } },
        resourceVersion: '7',
      },
    ]);
  });

  it('server off, a Node without any taint: gets exactly the shutdown taint', async () => {
    const { api, reconcile } = setUp();
    api.lookup = withStatus('off');
    const untainted = node('False');
    delete untainted.spec?.taints;
    await reconcile(untainted);
    assert.deepEqual(api.callsOf('patchNode')[0]?.patch, { spec: { taints: [shutdown] } });
  });

  it('server off, Node already tainted: nothing written', async () => {
    const { api, reconcile } = setUp();
    api.lookup = withStatus('off');
    assert.deepEqual(await reconcile(node('False', { taints: [shutdown] })), {
      requeueAfterMs: MONITOR_MS - 2000 + 1,
    });
    assert.deepEqual(api.calls, [LOOKUP]);
  });

  it('server off, but the Node is Ready on the fresh read after a conflict: not tainted', async () => {
    const { api, reconcile } = setUp();
    api.lookup = withStatus('off');
    api.patchErrors.push(conflict());
    api.live.set('worker-1', node('True', { resourceVersion: '8' }));
    await reconcile(node('False'));
    assert.deepEqual(
      api.calls.map((c) => c.call),
      ['lookupServer', 'patchNode', 'getNode'],
    );
  });

  it('server off, a conflict with kubelet’s own taint change: tainted on top of the fresh taints', async () => {
    const { api, reconcile } = setUp();
    api.lookup = withStatus('off');
    api.patchErrors.push(conflict());
    api.live.set('worker-1', node('False', { taints: [other], resourceVersion: '8' }));
    await reconcile(node('False'));
    assert.deepEqual(api.callsOf('patchNode')[1], {
      call: 'patchNode',
      name: 'worker-1',
      patch: { spec: { taints: [other, shutdown] } },
      resourceVersion: '8',
    });
  });

  it('server confirmed gone: DeletingNode, then a delete guarded by uid and resourceVersion', async () => {
    const { api, reconcile } = setUp();
    api.lookup = gone;
    assert.equal(await reconcile(node('Unknown')), undefined);
    assert.deepEqual(api.calls, [
      LOOKUP,
      {
        call: 'recordEvent',
        name: 'worker-1',
        event: {
          type: 'Normal',
          reason: EventReason.DeletingNode,
          action: 'DeleteNode',
          note: 'Deleting Node worker-1 because its server 42 does not exist in Hetzner Cloud (GET /servers/42: 404 not_found)',
        },
      },
      { call: 'deleteNode', name: 'worker-1', preconditions: { uid: 'uid-1', resourceVersion: '7' } },
    ]);
  });

  it('a delete refused by its preconditions (409) fails the reconcile, so the Node is judged again', async () => {
    const { api, reconcile } = setUp();
    api.lookup = gone;
    api.deleteErrors.push(conflict());
    await assert.rejects(reconcile(node('False')), { reason: 'Conflict' });
  });

  for (const unknown of unknowns)
    it(`server state unknown (${unknown.state === 'unknown' ? unknown.reason : ''}): never deleted, nothing written, looked up again when the directory can answer`, async () => {
      const { api, reconcile } = setUp();
      api.lookup = unknown;
      for (const taints of [[], [shutdown]])
        assert.deepEqual(await reconcile(node('False', { taints })), { requeueAfterMs: 4000 });
      assert.deepEqual(api.calls, [LOOKUP, LOOKUP]);
    });
});

describe('createLifecycleReconciler: the pace of the checks', () => {
  const named = (name: string, ready: 'True' | 'False'): Node => {
    const n = node(ready);
    if (n.metadata) n.metadata.name = name;
    return n;
  };
  const maxAges = (api: FakeNodeApi) => api.callsOf('lookupServer').map((c) => c.options.maxAgeMs);

  it('500 servers (10 pages), one NotReady Node: data up to the sweep period old (55 s by default), back when it expires', async () => {
    const { api, reconcile } = setUp({ pages: 10 });
    api.lookup = withStatus('running');
    assert.deepEqual(await reconcile(node('False')), { requeueAfterMs: SWEEP_MS - 2000 + 1 });
    assert.deepEqual(api.calls, [{ ...LOOKUP, options: { maxAgeMs: SWEEP_MS, priority: 'urgent' } }]);
  });

  it('each monitor period while affordable; the sweep period from the NotReady Node too many on; back when one is Ready or gone', async () => {
    // 2 pages per 55 s allow 2 lookups: one Node each 5 s would be 11.
    const { api, reconcile } = setUp({ pages: 22, sweepPeriodMs: SWEEP_MS });
    api.lookup = withStatus('running');
    await reconcile(named('a', 'False'), undefined, 'a');
    await reconcile(named('b', 'False'), undefined, 'b');
    await reconcile(named('b', 'False'), undefined, 'b'); // the same Node again: still two
    await reconcile(named('c', 'False'), undefined, 'c');
    await reconcile(named('c', 'True'), undefined, 'c'); // Ready: no longer checked
    await reconcile(named('a', 'False'), undefined, 'a');
    await reconcile(named('d', 'False'), undefined, 'd');
    await reconcile(undefined, undefined, 'd'); // deleted: no longer checked
    await reconcile(named('a', 'False'), undefined, 'a');
    assert.deepEqual(maxAges(api), [
      MONITOR_MS,
      MONITOR_MS,
      MONITOR_MS,
      SWEEP_MS,
      MONITOR_MS,
      SWEEP_MS,
      MONITOR_MS,
    ]);
  });

  it('a Node that is not ours, or not initialised, is not counted', async () => {
    const { api, reconcile } = setUp({ pages: 11, sweepPeriodMs: SWEEP_MS });
    api.lookup = withStatus('running');
    const foreign = node('False', { providerID: 'aws:///x/i-1' });
    const uninitialised = node('False', { taints: [{ key: UNINITIALIZED_TAINT, effect: 'NoSchedule' }] });
    await reconcile(foreign, undefined, 'foreign');
    await reconcile(uninitialised, undefined, 'uninitialised');
    await reconcile(named('a', 'False'), undefined, 'a');
    assert.deepEqual(maxAges(api), [MONITOR_MS]);
  });
});

describe('createLifecycleReconciler: log lines', () => {
  it('each step taken is one line with the dialect’s fields; a step not taken is none', async () => {
    const { api, reconcile } = setUp();
    const { log, lines } = capturingLogger();
    await reconcile(node('True', { taints: [shutdown] }), log);
    api.patchErrors.push(conflict());
    api.live.set('worker-1', node('False', { taints: [shutdown] }));
    await reconcile(node('True', { taints: [shutdown] }), log);
    api.lookup = withStatus('off');
    await reconcile(node('False'), log);
    api.patchErrors.push(conflict());
    api.live.set('worker-1', node('True'));
    await reconcile(node('False'), log);
    api.lookup = withStatus('running');
    await reconcile(node('False'), log);
    api.lookup = unknowns[0] ?? gone;
    await reconcile(node('False'), log);
    api.lookup = gone;
    await reconcile(node('False'), log);
    assert.deepEqual(await lines(), [
      { level: 'info', message: 'Node Ready: shutdown taint removed', action: 'remove-shutdown-taint' },
      {
        level: 'info',
        message: 'server is off: Node tainted as shut down',
        action: 'add-shutdown-taint',
        serverID: 42,
      },
      {
        level: 'debug',
        message: 'server state unknown; not acting',
        serverID: 42,
        reason: '503 unavailable: down',
      },
      { level: 'info', message: 'server gone: deleting Node', action: 'delete-node', serverID: 42 },
    ]);
  });
});
