import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject, type Resource } from '@loopwright/client';
import {
  createTestNamespace,
  eventually,
  loadTestKubeConfig,
  startControlPlane,
  type TestNamespace,
} from '@loopwright/envtest';
import { objectKey } from './indexers.ts';
import { Informer, type InformerSettings } from './informer.ts';
import { HttpFaultProxy } from './http-fault-proxy.test-support.ts';
import { recordingLogger } from './scripted-client.test-support.ts';
import type { InitialSync } from './streaming-list.ts';

type Cm = KubeObject & { data?: Record<string, string> };

const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };

let kc: KubeConfig;
let setup: KubeClient;
let configMaps: Resource<Cm>;
let ns: TestNamespace;
let other: TestNamespace;

before(async () => {
  kc = loadTestKubeConfig();
  setup = new KubeClient(kc, { rateLimit: false });
  configMaps = setup.resource<Cm>(CONFIGMAPS);
  ns = await createTestNamespace(kc, 'streaming');
  other = await createTestNamespace(kc, 'streaming-other');
});
after(async () => {
  await ns.cleanup();
  await other.cleanup();
  await setup.close();
});

async function createMany(
  namespace: string,
  count: number,
  labels: (i: number) => Record<string, string>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        const i = next++;
        await configMaps.create({
          metadata: { namespace, name: `cm-${i}`, labels: labels(i) },
          data: { v: '1' },
        });
      }
    }),
  );
}

/** Handler calls as `verb key@resourceVersion[ initial|unknown]` lines, plus hook failures. */
function observed(informer: Informer<Cm>): string[] {
  const calls: string[] = [];
  const at = (obj: Cm): string => `${objectKey(obj)}@${obj.metadata?.resourceVersion ?? ''}`;
  informer.addEventHandler({
    onAdd: (obj, initial) => calls.push(`add ${at(obj)}${initial ? ' initial' : ''}`),
    onUpdate: (_old, obj) => calls.push(`update ${at(obj)}`),
    onDelete: (obj, { finalStateUnknown }) =>
      calls.push(`delete ${at(obj)}${finalStateUnknown ? ' unknown' : ''}`),
  });
  return calls;
}

function settings(initialSync: InitialSync) {
  const watchErrors: string[] = [];
  let relists = 0;
  const logger = recordingLogger();
  const informerSettings: InformerSettings<Cm> = {
    initialSync,
    backoff: { durationMs: 100, capMs: 1000 },
    logger,
    metrics: {
      watchError: (_resource, reason) => watchErrors.push(reason),
      relist: () => {
        relists++;
      },
    },
  };
  return { watchErrors, relists: () => relists, logger, settings: informerSettings };
}

function cacheContent(informer: Informer<Cm>): string[] {
  return informer.lister
    .list()
    .map((cm) => `${objectKey(cm)}@${cm.metadata?.resourceVersion ?? ''}`)
    .sort();
}

const isWatch = (url: URL): boolean => url.searchParams.get('watch') === '1';
const isStreamingList = (url: URL): boolean =>
  isWatch(url) && url.searchParams.get('sendInitialEvents') === 'true';

describe('streaming lists (WatchList) against a real API server', () => {
  it('fill the cache and call the handlers exactly as a paginated list does, then go on watching', async () => {
    // More than two pages of 500, across namespaces, some of them outside the label selector.
    await createMany(ns.name, 900, (i) => ({ suite: 'parity', pick: i % 9 === 0 ? 'no' : 'yes' }));
    await createMany(other.name, 500, () => ({ suite: 'parity', pick: 'yes' }));
    const informers = new Map<
      InitialSync,
      { informer: Informer<Cm>; calls: string[]; proxy: HttpFaultProxy }
    >();
    for (const initialSync of ['list', 'watch-list'] as const) {
      const proxy = await HttpFaultProxy.start(kc);
      const informer = new Informer<Cm>({
        ...settings(initialSync).settings,
        client: new KubeClient(proxy.kubeConfig(), { rateLimit: false }),
        ...CONFIGMAPS,
        labelSelector: 'suite=parity,pick=yes',
      });
      informers.set(initialSync, { informer, calls: observed(informer), proxy });
    }
    try {
      for (const { informer } of informers.values()) informer.start();
      for (const { informer } of informers.values()) await informer.waitForSync(AbortSignal.timeout(60_000));
      const byList = informers.get('list');
      const byStream = informers.get('watch-list');
      assert.ok(byList !== undefined && byStream !== undefined);
      assert.equal(byStream.informer.lister.list().length, 800 + 500);
      assert.deepEqual(cacheContent(byStream.informer), cacheContent(byList.informer));
      assert.deepEqual([...byStream.calls].sort(), [...byList.calls].sort());
      assert.ok(byStream.calls.every((call) => call.endsWith(' initial')));
      assert.ok(
        byStream.informer.lister.list().every((cm) => cm.kind === 'ConfigMap' && cm.apiVersion === 'v1'),
      );
      // client-go's consistency check: the streamed state is the list at the end bookmark's version.
      const exact = await configMaps.list({
        labelSelector: 'suite=parity,pick=yes',
        resourceVersion: byStream.informer.lastSyncResourceVersion ?? '',
        resourceVersionMatch: 'Exact',
      });
      assert.deepEqual(
        exact.items.map((cm) => `${objectKey(cm)}@${cm.metadata?.resourceVersion ?? ''}`).sort(),
        cacheContent(byStream.informer),
      );
      assert.deepEqual(
        byStream.proxy.requests.filter((url) => !isWatch(url)),
        [],
        'no list request',
      );
      assert.equal(byStream.proxy.requests.length, 1);
      assert.equal(byStream.proxy.requests.filter(isStreamingList).length, 1);
      assert.equal(
        byList.proxy.requests.filter((url) => !isWatch(url)).length,
        3,
        '1,300 objects in pages of 500',
      );

      // The stream goes on as the watch: a change arrives on it, as a live event.
      byStream.calls.length = 0;
      const added = await configMaps.create({
        metadata: { namespace: other.name, name: 'after-sync', labels: { suite: 'parity', pick: 'yes' } },
      });
      await eventually(() => {
        assert.deepEqual(byStream.calls, [
          `add ${objectKey(added)}@${added.metadata?.resourceVersion ?? ''}`,
        ]);
      });
      assert.equal(byStream.proxy.requests.length, 1, 'no second request');
    } finally {
      for (const { informer, proxy } of informers.values()) {
        informer.stop();
        await proxy.close();
      }
    }
  });

  it('relists after a 410 by a streaming list and delivers the diff', async () => {
    const proxy = await HttpFaultProxy.start(kc);
    const h = settings('watch-list');
    const labels = { suite: 'relist' };
    for (const name of ['keep', 'change', 'delete']) {
      await configMaps.create({ metadata: { namespace: ns.name, name, labels }, data: { v: '1' } });
    }
    const informer = new Informer<Cm>({
      ...h.settings,
      client: new KubeClient(proxy.kubeConfig()),
      ...CONFIGMAPS,
      namespace: ns.name,
      labelSelector: 'suite=relist',
    });
    const calls = observed(informer);
    informer.start();
    try {
      await informer.waitForSync(AbortSignal.timeout(20_000));
      await eventually(() => {
        assert.equal(proxy.openWatches, 1, 'watching');
      });
      calls.length = 0;
      // Park the reconnect, change things while nobody watches, then answer the reconnect with 410.
      proxy.hold();
      proxy.failNextWatchWithGone('event');
      proxy.endOpenWatches();
      await configMaps.delete({ namespace: ns.name, name: 'delete' });
      const current = await configMaps.get({ namespace: ns.name, name: 'change' });
      const changed = await configMaps.update({ ...current, data: { v: '2' } });
      const created = await configMaps.create({ metadata: { namespace: ns.name, name: 'new', labels } });
      proxy.release();
      await eventually(
        () => {
          assert.equal(calls.length, 3);
        },
        { timeoutMs: 20_000 },
      );
      const at = (obj: Cm): string => `${objectKey(obj)}@${obj.metadata?.resourceVersion ?? ''}`;
      assert.equal(
        calls.filter((call) => call.startsWith(`delete ${ns.name}/delete@`) && call.endsWith(' unknown'))
          .length,
        1,
      );
      assert.deepEqual(calls.filter((call) => !call.startsWith('delete')).sort(), [
        `add ${at(created)}`,
        `update ${at(changed)}`,
      ]);
      assert.equal(h.relists(), 1);
      assert.deepEqual(
        proxy.requests.filter((url) => !isWatch(url)),
        [],
        'no list request',
      );
      const streams = proxy.requests.filter(isStreamingList);
      assert.equal(streams.length, 2, 'the initial sync and the relist');
      assert.ok(streams.every((url) => url.searchParams.get('resourceVersion') === ''));
      assert.equal(streams[1]?.searchParams.get('resourceVersionMatch'), 'NotOlderThan');
    } finally {
      informer.stop();
      await proxy.close();
    }
  });

  it('falls back to a list, for good, on an API server with the WatchList feature off', async () => {
    const controlPlane = await startControlPlane({
      apiServerFlags: ['--feature-gates=WatchList=false'],
      log: () => undefined,
    });
    const oldKc = new KubeConfig();
    oldKc.loadFromFile(controlPlane.kubeconfigPath);
    const proxy = await HttpFaultProxy.start(oldKc);
    const h = settings('watch-list');
    try {
      const old = new KubeClient(oldKc);
      await old.resource<Cm>(CONFIGMAPS).create({ metadata: { namespace: 'default', name: 'a' } });
      await old.close();
      const informer = new Informer<Cm>({
        ...h.settings,
        client: new KubeClient(proxy.kubeConfig()),
        ...CONFIGMAPS,
        namespace: 'default',
      });
      const calls = observed(informer);
      informer.start();
      try {
        await informer.waitForSync(AbortSignal.timeout(20_000));
        assert.deepEqual(
          calls.map((call) => call.replace(/@\d+/, '')),
          ['add default/a initial'],
        );
        assert.deepEqual(h.watchErrors, [], 'a refusal is not a failure');
        const fallback = h.logger.lines.filter((line) => line.message.includes('streaming lists'));
        assert.deepEqual(
          fallback.map((line) => `${line.level} ${String(line.fields?.statusCode)}`),
          ['debug 422'],
        );
        // The watch expires: the relist is a list, not another streaming list the server refuses.
        await eventually(() => {
          assert.equal(proxy.openWatches, 1, 'watching');
        });
        proxy.failNextWatchWithGone('status');
        proxy.endOpenWatches();
        await eventually(
          () => {
            assert.equal(h.relists(), 1);
            assert.equal(proxy.requests.filter((url) => !isWatch(url)).length, 2, 'listed twice');
          },
          { timeoutMs: 20_000 },
        );
        assert.equal(proxy.requests.filter(isStreamingList).length, 1, 'asked once');
        assert.equal(h.logger.lines.filter((line) => line.message.includes('streaming lists')).length, 1);
      } finally {
        informer.stop();
      }
    } finally {
      await proxy.close();
      await controlPlane.stop();
    }
  });
});
