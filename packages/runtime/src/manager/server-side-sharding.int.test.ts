/**
 * Sharded Managers on a kube-apiserver with ShardedListAndWatch on (a control plane of this file's own):
 * each of three replicas' primary cache holds exactly the objects of the buckets it holds (by our hash),
 * together everything, without overlap; every object is reconciled once, by its bucket's holder; when
 * one Manager stops, the others' caches grow to its buckets and its objects are reconciled. On the test
 * run's own control plane (the gate off, the 1.36 default) a sharded Manager says it filters in-replica.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject, type Resource } from '@loopwright/client';
import {
  createTestNamespace,
  eventually,
  loadTestKubeConfig,
  startControlPlane,
  type ControlPlane,
  type TestNamespace,
} from '@loopwright/envtest';
import { LEASES } from '@loopwright/leader-election';
import { Controller } from '../controller/controller.ts';
import { bucketOfValue } from '../controller/shard-filter.ts';
import { createLogger } from '../log/index.ts';
import { assign } from '../sharding/assignment.ts';
import { HOLDINGS_ANNOTATION, parseHoldings } from '../sharding/holdings.ts';
import { memberLeaseName, type LeaseObject } from '../sharding/member-lease.ts';
import { Manager, type ManagerExit } from './manager.ts';

const RING = 'configmaps';
const SUITE = 'server-side-sharding';
const OBJECTS = 300;
/** Long enough that two Managers reconciling one key at once would overlap. */
const RECONCILE_MS = 5;
const CONFIG_MAPS = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const CRDS = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};

interface Reconcile {
  key: string;
  manager: string;
  /** The reconcile found its object in the cache (false: it saw a deletion). */
  found: boolean;
  start: number;
  end: number;
}

interface Running {
  identity: string;
  manager: Manager;
  abort: AbortController;
  done: Promise<ManagerExit>;
  /** The Manager's JSON log lines. */
  lines: Record<string, unknown>[];
}

function logTo(lines: Record<string, unknown>[]) {
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  return createLogger({ format: 'json', level: 'info', stream });
}

function startManager(kc: KubeConfig, namespace: string, reconciles: Reconcile[], index: number): Running {
  const identity = `server-side-${index}-${randomUUID().slice(0, 8)}`;
  const lines: Record<string, unknown>[] = [];
  const manager = new Manager({
    kubeConfig: kc,
    logger: logTo(lines),
    health: false,
    identity,
    gracefulShutdownTimeoutMs: 5_000,
    // As sharder.int.test.ts: short, with room for a loaded machine.
    sharding: { namespace, ring: RING, leaseDurationMs: 3_000, renewDeadlineMs: 2_500, retryPeriodMs: 500 },
  });
  manager.add(
    new Controller<KubeObject>({
      name: 'configmaps',
      for: { ...CONFIG_MAPS, namespace, labelSelector: `suite=${SUITE}` },
      maxConcurrentReconciles: 4,
      reconcile: async ({ key, object }) => {
        const start = performance.now();
        await new Promise((resolve) => setTimeout(resolve, RECONCILE_MS));
        reconciles.push({
          key,
          manager: identity,
          found: object !== undefined,
          start,
          end: performance.now(),
        });
      },
    }),
  );
  const abort = new AbortController();
  return { identity, manager, abort, done: manager.start(abort.signal), lines };
}

/** Every pair of reconciles of one key by two Managers whose intervals overlap. */
function overlaps(reconciles: Reconcile[]): string[] {
  const found: string[] = [];
  for (const [key, list] of Map.groupBy(reconciles, (r) => r.key))
    for (const [i, r] of list.entries())
      for (const s of list.slice(i + 1))
        if (r.manager !== s.manager && r.start < s.end && s.start < r.end)
          found.push(`${key}: ${r.manager} and ${s.manager}`);
  return found;
}

describe('sharded Managers on a server with ShardedListAndWatch on', () => {
  let controlPlane: ControlPlane;
  let kc: KubeConfig;
  let client: KubeClient;
  /** The control plane is this file's own, and runs no kube-controller-manager to make namespaces ready. */
  const namespace = 'default';
  const reconciles: Reconcile[] = [];
  const managers: Running[] = [];
  /** Every object's name, by the bucket of its uid. */
  const bucketOf = new Map<string, number>();

  before(async () => {
    controlPlane = await startControlPlane({
      apiServerFlags: ['--feature-gates=ShardedListAndWatch=true'],
      controllers: [],
      log: () => undefined,
    });
    kc = new KubeConfig();
    kc.loadFromFile(controlPlane.kubeconfigPath);
    client = new KubeClient(kc, { rateLimit: false });
  });
  after(async () => {
    for (const m of managers) m.abort.abort();
    await Promise.allSettled(managers.map((m) => m.done));
    await client.close();
    await controlPlane.stop();
  });

  /** The buckets each running Manager's member Lease in `ring` lists. */
  async function holdings(ring = RING): Promise<Map<string, number[]>> {
    const leases = await client.resource<LeaseObject>(LEASES).list({ namespace });
    const held = new Map<string, number[]>();
    for (const lease of leases.items) {
      const identity = lease.spec?.holderIdentity ?? '';
      const listed = parseHoldings(lease.metadata?.annotations?.[HOLDINGS_ANNOTATION] ?? '');
      if (lease.metadata?.name === memberLeaseName(ring, identity)) held.set(identity, listed);
    }
    return held;
  }

  /** The names in a Manager's primary cache. */
  function cached(running: Running): string[] {
    const informer = running.manager.factory.forResource({
      ...CONFIG_MAPS,
      namespace,
      labelSelector: `suite=${SUITE}`,
    });
    return informer.lister
      .list()
      .map((obj) => obj.metadata?.name ?? '')
      .sort();
  }

  /** The Managers hold the assignment of their identities, and each caches exactly its buckets' objects. */
  async function converged(running: Running[]): Promise<void> {
    const held = await holdings();
    const target = assign(running.map((m) => m.identity));
    const seen = new Set<string>();
    for (const m of running) {
      const buckets = held.get(m.identity) ?? [];
      assert.deepEqual(buckets, [...(target.get(m.identity) ?? [])], `${m.identity} holds its share`);
      const expected = [...bucketOf]
        .filter(([, bucket]) => buckets.includes(bucket))
        .map(([name]) => name)
        .sort();
      const names = cached(m);
      assert.deepEqual(names, expected, `${m.identity} caches exactly its buckets' objects`);
      for (const name of names) {
        assert.ok(!seen.has(name), `${name} cached twice`);
        seen.add(name);
      }
    }
    assert.equal(seen.size, bucketOf.size, 'together the caches hold everything');
  }

  it('caches only each replica share, reconciles each object once, and widens on a hand-off', async () => {
    for (let i = 0; i < 3; i++) managers.push(startManager(kc, namespace, reconciles, i));
    await eventually(() => converged(managers), { timeoutMs: 30_000 });

    const configMaps: Resource<KubeObject> = client.resource<KubeObject>(CONFIG_MAPS);
    for (let first = 0; first < OBJECTS; first += 25) {
      const created = await Promise.all(
        Array.from({ length: Math.min(25, OBJECTS - first) }, (_, j) =>
          configMaps.create({
            metadata: { namespace, name: `cm-${first + j}`, labels: { suite: SUITE } },
          }),
        ),
      );
      for (const obj of created)
        bucketOf.set(obj.metadata?.name ?? '', bucketOfValue(obj.metadata?.uid ?? ''));
    }
    const keyOf = (name: string) => `${namespace}/${name}`;
    await eventually(
      async () => {
        const seen = new Set(reconciles.map((r) => r.key));
        for (const name of bucketOf.keys()) assert.ok(seen.has(keyOf(name)), `${name} reconciled`);
        await converged(managers);
      },
      { timeoutMs: 30_000 },
    );
    const held = await holdings();
    for (const [key, list] of Map.groupBy(reconciles, (r) => r.key)) {
      assert.equal(list.length, 1, `${key} reconciled once`);
      const bucket = bucketOf.get(key.slice(namespace.length + 1)) ?? -1;
      assert.ok(held.get(list[0]?.manager ?? '')?.includes(bucket), `${key} by its bucket's holder`);
    }
    const sizes = managers.map((m) => cached(m).length);
    console.log('cached per replica', sizes);
    assert.ok(
      sizes.every((size) => size < OBJECTS / 2),
      'each replica caches about a third, not everything',
    );

    const [stopped, ...survivors] = managers as [Running, ...Running[]];
    const leftBuckets = held.get(stopped.identity) ?? [];
    stopped.abort.abort();
    assert.equal(await stopped.done, 'stopped');
    const stoppedAt = performance.now();
    await eventually(
      async () => {
        await converged(survivors);
        const after = new Set(
          reconciles.filter((r) => r.start > stoppedAt && r.manager !== stopped.identity).map((r) => r.key),
        );
        for (const [name, bucket] of bucketOf)
          if (leftBuckets.includes(bucket))
            assert.ok(after.has(keyOf(name)), `${name} reconciled by a survivor`);
      },
      { timeoutMs: 30_000 },
    );
    // A newcomer takes buckets from both survivors: they drain, then narrow their caches, whose
    // re-lists delete the objects that left; those deletes must reconcile nothing.
    const newcomer = startManager(kc, namespace, reconciles, 3);
    managers.push(newcomer);
    const running = [...survivors, newcomer];
    await eventually(() => converged(running), { timeoutMs: 30_000 });
    assert.ok(cached(newcomer).length > 0, 'the newcomer caches its share');
    assert.deepEqual(overlaps(reconciles), []);
    assert.deepEqual(
      reconciles.filter((r) => !r.found),
      [],
      'no reconcile for the deletes a narrowing re-list delivers',
    );
    for (const m of managers) {
      const modes = m.lines.filter((line) => String(line.message).startsWith('running sharded'));
      assert.deepEqual(
        modes.map((line) => line.message),
        ['running sharded: server-side shard selectors: each replica caches only its share'],
      );
    }
    for (const m of running) m.abort.abort();
    assert.deepEqual(await Promise.all(running.map((m) => m.done)), ['stopped', 'stopped', 'stopped']);
  });

  it('a custom resource, whose lists carry no shardInfo in 1.36.3: still server-side, each cache its share', async () => {
    const group = 'shard.loopwright.test';
    const widgets = { group, version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };
    await client.resource<KubeObject>(CRDS).create({
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    } as KubeObject);
    const resource = client.resource<KubeObject>(widgets);
    await eventually(async () => {
      await resource.list({ namespace, limit: 1 });
    });
    const widgetBuckets = new Map<string, number>();
    for (let i = 0; i < 60; i++) {
      const created = await resource.create({ metadata: { namespace, name: `w-${i}` } });
      widgetBuckets.set(created.metadata?.name ?? '', bucketOfValue(created.metadata?.uid ?? ''));
    }
    const started: Running[] = [];
    for (let i = 0; i < 2; i++) {
      const identity = `widgets-${i}-${randomUUID().slice(0, 8)}`;
      const lines: Record<string, unknown>[] = [];
      const manager = new Manager({
        kubeConfig: kc,
        logger: logTo(lines),
        health: false,
        identity,
        sharding: {
          namespace,
          ring: 'widgets',
          leaseDurationMs: 3_000,
          renewDeadlineMs: 2_500,
          retryPeriodMs: 500,
        },
      });
      manager.add(
        new Controller<KubeObject>({
          name: 'widgets',
          for: { ...widgets, namespace },
          reconcile: () => Promise.resolve(),
        }),
      );
      const abort = new AbortController();
      started.push({ identity, manager, abort, done: manager.start(abort.signal), lines });
    }
    try {
      await eventually(
        async () => {
          const held = await holdings('widgets');
          for (const m of started) {
            const buckets = held.get(m.identity) ?? [];
            assert.ok(buckets.length > 0, `${m.identity} holds a share`);
            const expected = [...widgetBuckets]
              .filter(([, bucket]) => buckets.includes(bucket))
              .map(([name]) => name)
              .sort();
            const names = m.manager.factory
              .forResource({ ...widgets, namespace })
              .lister.list()
              .map((obj) => obj.metadata?.name ?? '')
              .sort();
            assert.deepEqual(names, expected, `${m.identity} caches exactly its buckets' widgets`);
          }
        },
        { timeoutMs: 30_000 },
      );
      for (const m of started) {
        const modes = m.lines.filter((line) => String(line.message).startsWith('running sharded'));
        assert.deepEqual(
          modes.map((line) => line.message),
          ['running sharded: server-side shard selectors: each replica caches only its share'],
        );
      }
    } finally {
      for (const m of started) m.abort.abort();
      await Promise.allSettled(started.map((m) => m.done));
    }
  });
});

describe('a sharded Manager on a server with ShardedListAndWatch off (the 1.36 default)', () => {
  let ns: TestNamespace;
  before(async () => {
    ns = await createTestNamespace(loadTestKubeConfig(), 'in-replica');
  });
  after(async () => {
    await ns.cleanup();
  });

  it('says once that it filters in-replica, and why', async () => {
    const reconciles: Reconcile[] = [];
    const running = startManager(loadTestKubeConfig(), ns.name, reconciles, 0);
    try {
      await eventually(() => {
        assert.ok(running.lines.some((line) => line.message === 'joined the ring'));
      });
      const modes = running.lines.filter((line) => String(line.message).startsWith('running sharded'));
      assert.equal(modes.length, 1);
      assert.equal(
        modes[0]?.message,
        'running sharded: in-replica filtering: every replica caches everything, reconciles only its share',
      );
      assert.match(String(modes[0].reason), /ignores shardSelector \(feature gate ShardedListAndWatch off\)/);
    } finally {
      running.abort.abort();
      assert.equal(await running.done, 'stopped');
    }
  });
});
