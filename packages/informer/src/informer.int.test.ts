import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject, type Resource } from '@loopwright/client';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { Informer, type EventHandlers, type InformerSettings } from './informer.ts';
import { HttpFaultProxy, withServer } from './http-fault-proxy.test-support.ts';
import { TcpFaultProxy } from './tcp-fault-proxy.test-support.ts';

type Cm = KubeObject & { data?: Record<string, string> };

let kc: KubeConfig;
let setup: KubeClient;
/** The test's own reads and writes, besides the informer under test. */
let configMaps: Resource<Cm>;
let ns: TestNamespace;
let other: TestNamespace;

before(async () => {
  kc = loadTestKubeConfig();
  setup = new KubeClient(kc);
  configMaps = setup.resource<Cm>({
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
  });
  ns = await createTestNamespace(kc, 'informer');
  other = await createTestNamespace(kc, 'informer-other');
});
after(async () => {
  await ns.cleanup();
  await other.cleanup();
  await setup.close();
});

/** Records what handlers saw, as `verb name[@data]` lines, plus failures reported to hooks. */
function observe(informer: Informer<Cm>) {
  const events: string[] = [];
  const handlers: EventHandlers<Cm> = {
    onAdd: (obj) => events.push(`add ${obj.metadata?.name ?? ''}`),
    onUpdate: (_old, obj) => events.push(`update ${obj.metadata?.name ?? ''}=${obj.data?.v ?? ''}`),
    onDelete: (obj, { finalStateUnknown }) =>
      events.push(`delete ${obj.metadata?.name ?? ''}${finalStateUnknown ? ' unknown' : ''}`),
  };
  informer.addEventHandler(handlers);
  return events;
}

function hooks() {
  const watchErrors: string[] = [];
  let relists = 0;
  const settings: InformerSettings<Cm> = {
    // Fast retries keep the suite short; the schedule itself is unit-tested.
    backoff: { durationMs: 100, capMs: 1000 },
    logger: { debug: () => undefined, warn: () => undefined, error: () => undefined },
    metrics: {
      watchError: (_resource, reason) => watchErrors.push(reason),
      relist: () => {
        relists++;
      },
    },
  };
  return { watchErrors, relists: () => relists, settings };
}

async function createCm(
  namespace: string,
  name: string,
  labels: Record<string, string> = {},
  v = '1',
): Promise<Cm> {
  return configMaps.create({ metadata: { namespace, name, labels }, data: { v } });
}

async function setData(namespace: string, name: string, v: string): Promise<void> {
  const current = await configMaps.get({ namespace, name });
  await configMaps.update({ ...current, data: { v } });
}

function cacheState(informer: Informer<Cm>): string[] {
  return informer.lister
    .list()
    .map((cm) => `${cm.metadata?.name ?? ''}=${cm.data?.v ?? ''}`)
    .sort();
}

async function serverState(namespace: string, labelSelector?: string): Promise<string[]> {
  const list = await configMaps.list({ namespace, labelSelector });
  return list.items
    .filter((cm) => cm.metadata?.name !== 'kube-root-ca.crt')
    .map((cm) => `${cm.metadata?.name ?? ''}=${cm.data?.v ?? ''}`)
    .sort();
}

describe('Informer against a real API server', () => {
  it('pages the initial list and scopes by namespace and label selector', async () => {
    const proxy = await HttpFaultProxy.start(kc);
    await Promise.all(
      Array.from({ length: 23 }, (_, i) =>
        createCm(ns.name, `page-${i}`, { suite: 'paging', pick: i % 2 === 0 ? 'yes' : 'no' }),
      ),
    );
    await createCm(other.name, 'page-elsewhere', { suite: 'paging', pick: 'yes' });
    const informer = new Informer<Cm>({
      ...hooks().settings,
      client: new KubeClient(proxy.kubeConfig()),
      group: '',
      version: 'v1',
      plural: 'configmaps',
      namespace: ns.name,
      labelSelector: 'suite=paging,pick=yes',
      pageSize: 5,
      // What a list does (a streaming list has no pages): streaming-list.int.test.ts compares the two.
      initialSync: 'list',
    });
    informer.start();
    try {
      await informer.waitForSync(AbortSignal.timeout(20_000));
      assert.deepEqual(cacheState(informer), await serverState(ns.name, 'suite=paging,pick=yes'));
      assert.equal(informer.lister.list().length, 12);
      assert.ok(informer.lister.list().every((cm) => cm.kind === 'ConfigMap' && cm.apiVersion === 'v1'));
      const lists = proxy.requests.filter((url) => !url.searchParams.has('watch'));
      assert.equal(lists.length, 3, '12 objects in pages of 5');
      assert.ok(lists.every((url) => url.searchParams.get('limit') === '5'));
      assert.ok(lists.every((url) => url.pathname === `/api/v1/namespaces/${ns.name}/configmaps`));
      assert.equal(lists.filter((url) => url.searchParams.has('continue')).length, 2);
    } finally {
      informer.stop();
      await proxy.close();
    }
  });

  it('recovers from all connections being cut and delivers what happened meanwhile', async () => {
    const server = new URL(kc.getCurrentCluster()?.server ?? '');
    const proxy = await TcpFaultProxy.start({ host: server.hostname, port: Number(server.port) });
    const h = hooks();
    await createCm(ns.name, 'cut-keep', { suite: 'cut' });
    await createCm(ns.name, 'cut-change', { suite: 'cut' });
    await createCm(ns.name, 'cut-delete', { suite: 'cut' });
    const client = new KubeClient(withServer(kc, `https://127.0.0.1:${proxy.port}`));
    const informer = new Informer<Cm>({
      ...h.settings,
      client,
      group: '',
      version: 'v1',
      plural: 'configmaps',
      namespace: ns.name,
      labelSelector: 'suite=cut',
      // A list then a watch, counted below; once synced, a streaming list's watch is a watch like it.
      initialSync: 'list',
    });
    const events = observe(informer);
    informer.start();
    try {
      await informer.waitForSync(AbortSignal.timeout(20_000));
      await eventually(() => {
        // The list's connection is kept alive and carries the watch: count requests, not connections.
        assert.ok(informer.lastSyncResourceVersion !== undefined && client.stats().requests >= 2, 'watching');
      });
      events.length = 0;
      proxy.refuse();
      await createCm(ns.name, 'cut-new', { suite: 'cut' });
      await setData(ns.name, 'cut-change', '2');
      await configMaps.delete({ namespace: ns.name, name: 'cut-delete' });
      await eventually(() => {
        assert.ok(h.watchErrors.includes('network'), 'the cut was noticed');
      });
      proxy.restore();
      await eventually(
        () => {
          assert.deepEqual([...events].sort(), ['add cut-new', 'delete cut-delete', 'update cut-change=2']);
        },
        { timeoutMs: 20_000 },
      );
      assert.deepEqual(cacheState(informer), await serverState(ns.name, 'suite=cut'));
      assert.equal(h.relists(), 0, 'resumed from the last resourceVersion, no relist needed');
    } finally {
      informer.stop();
      await proxy.close();
    }
  });

  it('restarts a watch that goes silent (inactivity timeout) and catches up', async () => {
    const server = new URL(kc.getCurrentCluster()?.server ?? '');
    const proxy = await TcpFaultProxy.start({ host: server.hostname, port: Number(server.port) });
    const h = hooks();
    await createCm(ns.name, 'silent-a', { suite: 'silent' });
    const informer = new Informer<Cm>({
      ...h.settings,
      client: new KubeClient(withServer(kc, `https://127.0.0.1:${proxy.port}`)),
      group: '',
      version: 'v1',
      plural: 'configmaps',
      namespace: ns.name,
      labelSelector: 'suite=silent',
      inactivityTimeoutMs: 1500,
      minWatchTimeoutSeconds: 3,
    });
    const events = observe(informer);
    informer.start();
    try {
      await informer.waitForSync(AbortSignal.timeout(20_000));
      events.length = 0;
      proxy.goSilent();
      await createCm(ns.name, 'silent-b', { suite: 'silent' });
      await setData(ns.name, 'silent-a', '2');
      await eventually(
        () => {
          assert.ok(h.watchErrors.includes('inactivity'), 'the dead connection was detected');
        },
        { timeoutMs: 10_000 },
      );
      assert.deepEqual(events, [], 'nothing can arrive through a silent connection');
      proxy.restore();
      await eventually(
        () => {
          assert.deepEqual([...events].sort(), ['add silent-b', 'update silent-a=2']);
        },
        { timeoutMs: 20_000 },
      );
    } finally {
      informer.stop();
      await proxy.close();
    }
  });

  for (const mode of ['event', 'status'] as const) {
    it(`relists after a 410 (${mode === 'event' ? 'ERROR event' : 'HTTP status'}) and delivers deletes for vanished objects`, async () => {
      const proxy = await HttpFaultProxy.start(kc);
      const h = hooks();
      const suite = `gone-${mode}`;
      await createCm(ns.name, `${suite}-keep`, { suite });
      await createCm(ns.name, `${suite}-change`, { suite });
      await createCm(ns.name, `${suite}-delete`, { suite });
      const informer = new Informer<Cm>({
        ...h.settings,
        client: new KubeClient(proxy.kubeConfig()),
        group: '',
        version: 'v1',
        plural: 'configmaps',
        namespace: ns.name,
        labelSelector: `suite=${suite}`,
      });
      const events = observe(informer);
      informer.start();
      try {
        await informer.waitForSync(AbortSignal.timeout(20_000));
        // Open, not only requested: endOpenWatches() below must end the watch that would otherwise
        // deliver the delete as it happens (the relist's tombstone is what this test is about).
        await eventually(() => {
          assert.equal(proxy.openWatches, 1, 'watching');
        });
        events.length = 0;
        // Park the reconnect, change things while nobody watches, then answer the reconnect with 410.
        proxy.hold();
        proxy.failNextWatchWithGone(mode);
        proxy.endOpenWatches();
        await configMaps.delete({ namespace: ns.name, name: `${suite}-delete` });
        await setData(ns.name, `${suite}-change`, '2');
        await createCm(ns.name, `${suite}-new`, { suite });
        proxy.release();
        await eventually(
          () => {
            assert.deepEqual([...events].sort(), [
              `add ${suite}-new`,
              `delete ${suite}-delete unknown`,
              `update ${suite}-change=2`,
            ]);
          },
          { timeoutMs: 20_000 },
        );
        assert.equal(h.relists(), 1);
        // The ended watch may also count as a short watch (it can be younger than 1 s here).
        assert.deepEqual(
          h.watchErrors.filter((reason) => reason !== 'short_watch'),
          ['gone'],
        );
        assert.deepEqual(cacheState(informer), await serverState(ns.name, `suite=${suite}`));
      } finally {
        informer.stop();
        await proxy.close();
      }
    });
  }

  it('advances its resourceVersion from bookmarks without delivering events', async () => {
    const h = hooks();
    const informer = new Informer<Cm>({
      ...h.settings,
      client: new KubeClient(kc),
      group: '',
      version: 'v1',
      plural: 'configmaps',
      namespace: ns.name,
      labelSelector: 'suite=bookmarks',
      // The API server sends a bookmark 2 s before a watch's timeout: a short timeout brings one soon.
      minWatchTimeoutSeconds: 4,
    });
    const events = observe(informer);
    informer.start();
    try {
      await informer.waitForSync(AbortSignal.timeout(20_000));
      const outside = await createCm(other.name, 'bookmark-elsewhere', { suite: 'bookmarks' });
      const target = BigInt(outside.metadata?.resourceVersion ?? '0');
      // resourceVersions are opaque to clients; comparing them numerically is valid for etcd-backed
      // servers and is only done here to observe the bookmark.
      await eventually(
        () => {
          assert.ok(BigInt(informer.lastSyncResourceVersion ?? '0') >= target);
        },
        { timeoutMs: 15_000 },
      );
      assert.deepEqual(events, []);
      assert.deepEqual(h.watchErrors, []);
    } finally {
      informer.stop();
    }
  });

  it('stops quietly: no handler calls or errors after stop()', async () => {
    const h = hooks();
    const informer = new Informer<Cm>({
      ...h.settings,
      client: new KubeClient(kc),
      group: '',
      version: 'v1',
      plural: 'configmaps',
      namespace: ns.name,
      labelSelector: 'suite=stop',
    });
    const events = observe(informer);
    informer.start();
    await informer.waitForSync(AbortSignal.timeout(20_000));
    informer.stop();
    await createCm(ns.name, 'after-stop', { suite: 'stop' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(events, []);
    assert.deepEqual(h.watchErrors, []);
  });
});
