import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from 'winston';
import { capturingLogger, conflict, FakeNodeApi, request, server } from './fake-node-api.test-support.ts';
import { PROVIDED_NODE_IP_ANNOTATION, UNINITIALIZED_TAINT } from './names.ts';
import type { NodeAddress } from './node-mapping.ts';
import type { Node, Taint } from './node.ts';
import { EventReason } from './reasons.ts';
import { createNodeReconciler } from './reconcile-node.ts';
import type { Lookup } from './server-directory.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const MONITOR_MS = 5000;
const REFRESH_MS = 300_000;
const uninitialized: Taint = { key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' };
const other: Taint = { key: 'other', effect: 'NoExecute' };

function node(
  options: {
    providerID?: string;
    taints?: Taint[];
    annotations?: Record<string, string>;
    created?: number;
    addresses?: NodeAddress[];
    resourceVersion?: string;
  } = {},
): Node {
  return {
    metadata: {
      name: 'worker-1',
      uid: 'uid-1',
      resourceVersion: options.resourceVersion ?? '7',
      ...(options.created === undefined
        ? {}
        : { creationTimestamp: new Date(options.created).toISOString().replace(/\.\d+Z$/, 'Z') }),
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: {
      ...(options.providerID ? { providerID: options.providerID } : {}),
      taints: options.taints ?? [],
    },
    status: { addresses: options.addresses ?? [] },
  };
}

function setUp(options: { initRetryMs?: number; now?: number } = {}) {
  const api = new FakeNodeApi();
  const reconcile = createNodeReconciler({
    api,
    addressFamily: 'ipv4',
    networkId: 7,
    zoneLabels: true,
    nodeMonitorPeriodMs: MONITOR_MS,
    nodeStatusUpdateFrequencyMs: REFRESH_MS,
    now: () => options.now ?? NOW,
    ...(options.initRetryMs === undefined ? {} : { initRetryMs: options.initRetryMs }),
  });
  return {
    api,
    reconcile: (n: Node | undefined, name?: string, log?: Logger) => reconcile(request(n, name, log)),
  };
}

const exists = (overrides = {}): Lookup => ({
  state: 'exists',
  server: server(overrides),
  fetchedAt: NOW - 1000,
});
const gone: Lookup = { state: 'gone', fetchedAt: NOW - 1000 };
const API_FAILURE = 'Hetzner Cloud API failing (503 unavailable: down); backing off';
const apiError: Lookup = { state: 'unknown', retryAfterMs: 4000, reason: API_FAILURE, cause: 'api-error' };
const BUDGET_WAIT = 'API budget: waiting for the rate limit to refill';
const budget: Lookup = { state: 'unknown', retryAfterMs: 2500, reason: BUDGET_WAIT, cause: 'budget' };
const ADDRESSES: NodeAddress[] = [
  { type: 'Hostname', address: 'worker-1' },
  { type: 'ExternalIP', address: '5.75.1.2' },
  { type: 'InternalIP', address: '10.0.0.5' },
];
const LABELS = {
  'instance.hetzner.cloud/provided-by': 'cloud',
  'node.kubernetes.io/instance-type': 'cx22',
  'beta.kubernetes.io/instance-type': 'cx22',
  'topology.kubernetes.io/region': 'nbg1',
  'failure-domain.beta.kubernetes.io/region': 'nbg1',
  'topology.kubernetes.io/zone': 'nbg1-dc3',
  'failure-domain.beta.kubernetes.io/zone': 'nbg1-dc3',
};

describe('createNodeReconciler: Nodes it never touches', () => {
  it('a deleted Node: no call at all', async () => {
    const { api, reconcile } = setUp();
    assert.equal(await reconcile(undefined, 'gone-node'), undefined);
    assert.deepEqual(api.calls, []);
  });

  for (const providerID of ['aws:///eu-central-1a/i-0abc', 'hrobot://5', 'hcloud://bm-5', 'hcloud://x'])
    it(`a foreign providerID (${providerID}), even with the uninitialized taint: no call at all`, async () => {
      const { api, reconcile } = setUp();
      api.lookup = exists();
      api.snapshot = { ok: true, snapshot: { byId: new Map(), byName: new Map(), takenAt: NOW } };
      assert.equal(await reconcile(node({ providerID, taints: [uninitialized] })), undefined);
      assert.equal(await reconcile(node({ providerID })), undefined);
      assert.deepEqual(api.calls, []);
    });

  it('neither a providerID nor the taint (no external cloud provider): no call at all', async () => {
    const { api, reconcile } = setUp();
    assert.equal(await reconcile(node({ taints: [other] })), undefined);
    assert.deepEqual(api.calls, []);
  });
});

describe('createNodeReconciler: initialisation', () => {
  it('by providerID: labels and taint in one conditional patch, then addresses, then Synced', async () => {
    const { api, reconcile } = setUp();
    api.lookup = exists();
    const result = await reconcile(node({ providerID: 'hcloud://42', taints: [uninitialized, other] }));
    assert.deepEqual(result, { requeueAfterMs: REFRESH_MS });
    assert.deepEqual(api.calls, [
      { call: 'lookupServer', ref: { id: 42 }, options: { maxAgeMs: Infinity, priority: 'urgent' } },
      {
        call: 'patchNode',
        name: 'worker-1',
        // providerID is set already: not written again
        patch: { metadata: { labels: LABELS }, spec: { taints: [other] } },
        resourceVersion: '7',
      },
      { call: 'patchNodeStatus', name: 'worker-1', patch: { status: { addresses: ADDRESSES } } },
      {
        call: 'recordEvent',
        name: 'worker-1',
        event: {
          type: 'Normal',
          reason: EventReason.Synced,
          action: 'InitializeNode',
          note: 'Node initialised from Hetzner Cloud server worker-1 (hcloud://42, cx22 in nbg1)',
        },
      },
    ]);
  });

  it('by name when there is no providerID: sets it, and accepts only data taken after the Node was created', async () => {
    const { api, reconcile } = setUp();
    api.lookup = exists();
    await reconcile(node({ taints: [uninitialized], created: NOW - 3000 }));
    const [lookup, patch] = api.calls;
    // created 3 s ago, +1 s for the timestamp's whole seconds: data at most 2 s old
    assert.deepEqual(lookup, {
      call: 'lookupServer',
      ref: { name: 'worker-1' },
      options: { maxAgeMs: 2000, priority: 'urgent' },
    });
    assert.deepEqual(patch, {
      call: 'patchNode',
      name: 'worker-1',
      patch: { metadata: { labels: LABELS }, spec: { providerID: 'hcloud://42', taints: [] } },
      resourceVersion: '7',
    });
  });

  it('by name, a Node created long ago (or without a timestamp) accepts data one monitor period old', async () => {
    for (const created of [NOW - 3_600_000, undefined]) {
      const { api, reconcile } = setUp();
      api.lookup = exists();
      await reconcile(node({ taints: [uninitialized], ...(created === undefined ? {} : { created }) }));
      assert.deepEqual(api.callsOf('lookupServer')[0]?.options, { maxAgeMs: MONITOR_MS, priority: 'urgent' });
    }
  });

  it('a failing API: a Warning naming it, the taint stays, retried when the directory can answer again', async () => {
    const { api, reconcile } = setUp();
    api.lookup = apiError;
    assert.deepEqual(await reconcile(node({ providerID: 'hcloud://42', taints: [uninitialized] })), {
      requeueAfterMs: 4000,
    });
    assert.deepEqual(api.writes(), [
      {
        call: 'recordEvent',
        name: 'worker-1',
        event: {
          type: 'Warning',
          reason: EventReason.HcloudAPIError,
          action: 'InitializeNode',
          note: `cannot look up the Hetzner Cloud server: ${API_FAILURE}; the Node keeps the ${UNINITIALIZED_TAINT} taint`,
        },
      },
    ]);
  });

  it('waiting for the API budget is routine: no Event, retried when the budget allows', async () => {
    const { api, reconcile } = setUp();
    api.lookup = budget;
    assert.deepEqual(await reconcile(node({ providerID: 'hcloud://42', taints: [uninitialized] })), {
      requeueAfterMs: 2500,
    });
    assert.deepEqual(api.writes(), []);
  });

  it('no server with the id: ServerNotFound naming the id, retried after 30 s doubling to 5 min', async () => {
    const { api, reconcile } = setUp();
    api.lookup = gone;
    const tainted = node({ providerID: 'hcloud://42', taints: [uninitialized] });
    const delays: unknown[] = [];
    for (let i = 0; i < 7; i++) delays.push(await reconcile(tainted));
    assert.deepEqual(
      delays,
      [30_000, 60_000, 120_000, 240_000, 300_000, 300_000, 300_000].map((ms) => ({ requeueAfterMs: ms })),
    );
    assert.deepEqual(api.callsOf('patchNode'), []);
    assert.deepEqual(api.callsOf('recordEvent')[0]?.event, {
      type: 'Warning',
      reason: EventReason.ServerNotFound,
      action: 'InitializeNode',
      note: `no Hetzner Cloud server with id 42 (providerID hcloud://42); the Node keeps the ${UNINITIALIZED_TAINT} taint`,
    });
  });

  it('no server with the name: ServerNotFound saying the Node was matched by name', async () => {
    const { api, reconcile } = setUp();
    api.lookup = gone;
    await reconcile(node({ taints: [uninitialized] }));
    assert.equal(
      api.callsOf('recordEvent')[0]?.event.note,
      `no Hetzner Cloud server named "worker-1" (the Node has no providerID, so it is matched by name); the Node keeps the ${UNINITIALIZED_TAINT} taint`,
    );
  });

  it('a provided-node-ip the server does not have: ProvidedNodeIPNotFound, nothing written', async () => {
    const { api, reconcile } = setUp();
    api.lookup = exists();
    const result = await reconcile(
      node({
        providerID: 'hcloud://42',
        taints: [uninitialized],
        annotations: { [PROVIDED_NODE_IP_ANNOTATION]: '192.168.77.1' },
      }),
    );
    assert.deepEqual(result, { requeueAfterMs: 30_000 });
    assert.deepEqual(api.writes(), [
      {
        call: 'recordEvent',
        name: 'worker-1',
        event: {
          type: 'Warning',
          reason: EventReason.ProvidedNodeIPNotFound,
          action: 'InitializeNode',
          note: `provided-node-ip 192.168.77.1 is not an address of the server (server addresses: 5.75.1.2, 10.0.0.5); the Node keeps the ${UNINITIALIZED_TAINT} taint`,
        },
      },
    ]);
  });

  it('a provided-node-ip the server has goes first', async () => {
    const { api, reconcile } = setUp();
    api.lookup = exists();
    await reconcile(
      node({
        providerID: 'hcloud://42',
        taints: [uninitialized],
        annotations: { [PROVIDED_NODE_IP_ANNOTATION]: '10.0.0.5' },
      }),
    );
    assert.deepEqual(api.callsOf('patchNodeStatus')[0]?.patch, {
      status: {
        addresses: [
          { type: 'InternalIP', address: '10.0.0.5' },
          { type: 'Hostname', address: 'worker-1' },
          { type: 'ExternalIP', address: '5.75.1.2' },
        ],
      },
    });
  });

  it('a server the API returned without type and location: no such labels, the Synced note names its id', async () => {
    const { api, reconcile } = setUp();
    api.lookup = exists({ server_type: null, location: null });
    await reconcile(node({ providerID: 'hcloud://42', taints: [uninitialized] }));
    assert.deepEqual(api.callsOf('patchNode')[0]?.patch, {
      metadata: { labels: { 'instance.hetzner.cloud/provided-by': 'cloud' } },
      spec: { taints: [] },
    });
    assert.equal(
      api.callsOf('recordEvent')[0]?.event.note,
      'Node initialised from Hetzner Cloud server worker-1 (hcloud://42)',
    );
  });

  it('a success starts the retry delay over; so does the Node’s deletion', async () => {
    const { api, reconcile } = setUp();
    const tainted = node({ providerID: 'hcloud://42', taints: [uninitialized] });
    api.lookup = gone;
    assert.deepEqual(await reconcile(tainted), { requeueAfterMs: 30_000 });
    assert.deepEqual(await reconcile(tainted), { requeueAfterMs: 60_000 });
    api.lookup = exists();
    assert.deepEqual(await reconcile(tainted), { requeueAfterMs: REFRESH_MS });
    api.lookup = gone;
    assert.deepEqual(await reconcile(tainted), { requeueAfterMs: 30_000 });
    assert.deepEqual(await reconcile(tainted), { requeueAfterMs: 60_000 });
    await reconcile(undefined, 'worker-1');
    assert.deepEqual(await reconcile(tainted), { requeueAfterMs: 30_000 });
  });

  it('each Node has its own retry delay', async () => {
    const { api, reconcile } = setUp();
    api.lookup = gone;
    const a = node({ providerID: 'hcloud://42', taints: [uninitialized] });
    const b: Node = { ...a, metadata: { ...a.metadata, name: 'worker-2' } };
    assert.deepEqual(await reconcile(a), { requeueAfterMs: 30_000 });
    assert.deepEqual(await reconcile(a), { requeueAfterMs: 60_000 });
    assert.deepEqual(await reconcile(b), { requeueAfterMs: 30_000 });
  });

  it('initRetryMs sets the first delay; the cap is 5 min even for a larger one', async () => {
    const tainted = node({ providerID: 'hcloud://42', taints: [uninitialized] });
    const small = setUp({ initRetryMs: 200 });
    small.api.lookup = gone;
    assert.deepEqual(await small.reconcile(tainted), { requeueAfterMs: 200 });
    assert.deepEqual(await small.reconcile(tainted), { requeueAfterMs: 400 });
    const large = setUp({ initRetryMs: 600_000 });
    large.api.lookup = gone;
    assert.deepEqual(await large.reconcile(tainted), { requeueAfterMs: 300_000 });
    assert.deepEqual(await large.reconcile(tainted), { requeueAfterMs: 300_000 });
  });

  it('a conflict: the patch is computed again from a fresh read, with its resourceVersion', async () => {
    const { api, reconcile } = setUp();
    api.lookup = exists();
    api.patchErrors.push(conflict());
    // kubelet added a taint meanwhile: kept, not overwritten
    api.live.set(
      'worker-1',
      node({
        taints: [uninitialized, other, { key: 'kubelet', effect: 'NoSchedule' }],
        resourceVersion: '8',
      }),
    );
    assert.deepEqual(await reconcile(node({ taints: [uninitialized] })), { requeueAfterMs: REFRESH_MS });
    assert.deepEqual(
      api.calls.map((c) => c.call),
      ['lookupServer', 'patchNode', 'getNode', 'patchNode', 'patchNodeStatus', 'recordEvent'],
    );
    assert.deepEqual(api.callsOf('patchNode')[1], {
      call: 'patchNode',
      name: 'worker-1',
      patch: {
        metadata: { labels: LABELS },
        spec: { providerID: 'hcloud://42', taints: [other, { key: 'kubelet', effect: 'NoSchedule' }] },
      },
      resourceVersion: '8',
    });
  });

  it('a conflict because the Node was initialised meanwhile: nothing more is written', async () => {
    const { api, reconcile } = setUp();
    api.lookup = exists();
    api.patchErrors.push(conflict());
    // Another writer (the previous leader, during a hand-over) initialised it from the same server.
    api.live.set('worker-1', node({ providerID: 'hcloud://42', resourceVersion: '8' }));
    assert.equal(await reconcile(node({ taints: [uninitialized] })), undefined);
    assert.deepEqual(
      api.calls.map((c) => c.call),
      ['lookupServer', 'patchNode', 'getNode'],
    );
  });

  it('a conflict because the Node now names another server: nothing more is written', async () => {
    const { api, reconcile } = setUp();
    api.lookup = exists();
    api.patchErrors.push(conflict());
    api.live.set(
      'worker-1',
      node({ providerID: 'hcloud://43', taints: [uninitialized], resourceVersion: '8' }),
    );
    assert.equal(await reconcile(node({ taints: [uninitialized] })), undefined);
    assert.deepEqual(
      api.calls.map((c) => c.call),
      ['lookupServer', 'patchNode', 'getNode'],
    );
  });

  it('conflicts five times in a row, or any other error: the reconcile fails (retried with backoff)', async () => {
    const { api, reconcile } = setUp();
    api.lookup = exists();
    api.live.set('worker-1', node({ taints: [uninitialized] }));
    for (let i = 0; i < 5; i++) api.patchErrors.push(conflict());
    await assert.rejects(reconcile(node({ taints: [uninitialized] })), { reason: 'Conflict' });
    assert.equal(api.callsOf('patchNode').length, 5);
    assert.deepEqual(api.callsOf('patchNodeStatus'), []);

    const forbidden = setUp();
    forbidden.api.lookup = exists();
    forbidden.api.patchErrors.push(new Error('forbidden'));
    await assert.rejects(forbidden.reconcile(node({ taints: [uninitialized] })), /forbidden/);
    assert.deepEqual(
      forbidden.api.calls.map((c) => c.call),
      ['lookupServer', 'patchNode'],
    );
  });
});

describe('createNodeReconciler: address refresh of initialised Nodes', () => {
  const snapshotWith = (...servers: ReturnType<typeof server>[]) => ({
    ok: true as const,
    snapshot: {
      byId: new Map(servers.map((s) => [s.id, s])),
      byName: new Map(servers.map((s) => [s.name, s])),
      takenAt: NOW - 10_000,
    },
  });
  const ready = (addresses: NodeAddress[], extra: { annotations?: Record<string, string> } = {}): Node =>
    node({ providerID: 'hcloud://42', addresses, ...extra });

  it('changed addresses are written; back when the snapshot expires', async () => {
    const { api, reconcile } = setUp();
    api.snapshot = snapshotWith(server({ public_net: { ipv4: { ip: '5.75.9.9' }, ipv6: null } }));
    const result = await reconcile(ready(ADDRESSES));
    assert.deepEqual(result, { requeueAfterMs: REFRESH_MS - 10_000 + 1 });
    assert.deepEqual(api.calls, [
      { call: 'serverSnapshot', options: { maxAgeMs: REFRESH_MS, priority: 'refresh' } },
      {
        call: 'patchNodeStatus',
        name: 'worker-1',
        patch: {
          status: {
            addresses: [
              { type: 'Hostname', address: 'worker-1' },
              { type: 'ExternalIP', address: '5.75.9.9' },
              { type: 'InternalIP', address: '10.0.0.5' },
            ],
          },
        },
      },
    ]);
  });

  it('unchanged addresses are not written', async () => {
    const { api, reconcile } = setUp();
    api.snapshot = snapshotWith(server());
    assert.deepEqual(await reconcile(ready(ADDRESSES)), { requeueAfterMs: REFRESH_MS - 10_000 + 1 });
    assert.deepEqual(api.writes(), []);
  });

  it('a server missing from the snapshot: nothing written (the lifecycle controller confirms by id)', async () => {
    const { api, reconcile } = setUp();
    api.snapshot = snapshotWith(server({ id: 43 }));
    assert.deepEqual(await reconcile(ready([])), { requeueAfterMs: REFRESH_MS - 10_000 + 1 });
    assert.deepEqual(api.writes(), []);
  });

  it('an expired snapshot still comes back at least 1 ms later', async () => {
    const { api, reconcile } = setUp({ now: NOW + REFRESH_MS });
    api.snapshot = snapshotWith(server());
    assert.deepEqual(await reconcile(ready(ADDRESSES)), { requeueAfterMs: 1 });
  });

  it('no snapshot now (budget, failing API): nothing written, back when the directory says', async () => {
    const { api, reconcile } = setUp();
    api.snapshot = { ok: false, retryAfterMs: 9000, reason: 'API budget', cause: 'budget' };
    assert.deepEqual(await reconcile(ready(ADDRESSES)), { requeueAfterMs: 9000 });
    assert.deepEqual(api.writes(), []);
  });

  it('a provided-node-ip the server no longer has: AddressesNotUpdated, the addresses stay', async () => {
    const { api, reconcile } = setUp();
    api.snapshot = snapshotWith(server());
    await reconcile(ready(ADDRESSES, { annotations: { [PROVIDED_NODE_IP_ANNOTATION]: '192.168.77.1' } }));
    assert.deepEqual(api.writes(), [
      {
        call: 'recordEvent',
        name: 'worker-1',
        event: {
          type: 'Warning',
          reason: EventReason.AddressesNotUpdated,
          action: 'UpdateAddresses',
          note: 'provided-node-ip 192.168.77.1 is not an address of the server (server addresses: 5.75.1.2, 10.0.0.5)',
        },
      },
    ]);
  });
});

describe('createNodeReconciler: log lines', () => {
  it('each step is one line with the dialect’s fields', async () => {
    const { api, reconcile } = setUp();
    const { log, lines } = capturingLogger();
    const run = (n: Node) => reconcile(n, undefined, log);
    const tainted = node({ providerID: 'hcloud://42', taints: [uninitialized] });

    api.lookup = budget;
    await run(tainted);
    api.lookup = gone;
    await run(tainted);
    api.lookup = exists();
    await run(tainted);
    api.patchErrors.push(conflict());
    api.live.set('worker-1', node({ providerID: 'hcloud://42' }));
    await run(tainted);
    const initialised = node({ providerID: 'hcloud://42', addresses: ADDRESSES });
    api.snapshot = { ok: false, retryAfterMs: 9000, reason: 'API budget', cause: 'budget' };
    await run(initialised);
    api.snapshot = {
      ok: true,
      snapshot: {
        byId: new Map([[42, server({ public_net: { ipv4: null, ipv6: null } })]]),
        byName: new Map(),
        takenAt: NOW,
      },
    };
    await run(initialised);
    await run(
      node({ providerID: 'hcloud://42', annotations: { [PROVIDED_NODE_IP_ANNOTATION]: '192.0.2.1' } }),
    );

    assert.deepEqual(await lines(), [
      {
        level: 'info',
        message: 'initialisation postponed',
        reason: BUDGET_WAIT,
        retryAfterMs: 2500,
      },
      {
        level: 'warn',
        message: 'cannot initialise Node',
        action: 'initialise',
        reason: EventReason.ServerNotFound,
        note: `no Hetzner Cloud server with id 42 (providerID hcloud://42); the Node keeps the ${UNINITIALIZED_TAINT} taint`,
        retryAfterMs: 30_000,
      },
      {
        level: 'info',
        message: 'Node initialised',
        action: 'initialise',
        serverID: 42,
        providerID: 'hcloud://42',
        addresses: 3,
      },
      { level: 'debug', message: 'Node needs no initialisation after all', serverID: 42 },
      { level: 'debug', message: 'address refresh postponed', reason: 'API budget', retryAfterMs: 9000 },
      {
        level: 'info',
        message: 'addresses updated',
        action: 'update-addresses',
        serverID: 42,
        addresses: 'Hostname=worker-1 InternalIP=10.0.0.5',
      },
      {
        level: 'warn',
        message: 'cannot refresh addresses',
        action: 'update-addresses',
        serverID: 42,
        note: 'provided-node-ip 192.0.2.1 is not an address of the server (server addresses: 10.0.0.5)',
      },
    ]);
  });
});
