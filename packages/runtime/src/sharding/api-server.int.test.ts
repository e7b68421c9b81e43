/**
 * The hash space as the real kube-apiserver 1.36 filters it (KEP-5866): our FNV-1a, buckets and
 * selector wire must select exactly what the server selects, or a replica would cache objects it does
 * not reconcile and miss ones it does. With the ShardedListAndWatch gate on (a control plane of this
 * file's own) and off (the test run's, the 1.36 default), where the server ignores the selector.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  isInternalError,
  KubeClient,
  loadKubeConfig,
  type KubeObject,
  type Resource,
} from '@loopwright/client';
import {
  createTestNamespace,
  loadTestKubeConfig,
  startControlPlane,
  type ControlPlane,
  type TestNamespace,
} from '@loopwright/envtest';
import { bucketOf, fnv1a64, shardSelector } from './index.ts';

const CONFIG_MAPS = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const OBJECTS = 40;
/** Half the space by bucket parity: every selector term is one bucket, so each of 128 bounds is checked. */
const EVEN = Array.from({ length: 128 }, (_, i) => 2 * i);
const ODD = EVEN.map((bucket) => bucket + 1);

const uidsOf = (items: KubeObject[]): string[] => items.map((item) => item.metadata?.uid ?? '').sort();
const even = (uid: string): boolean => bucketOf(fnv1a64(uid)) % 2 === 0;

async function createObjects(configMaps: Resource<KubeObject>, namespace: string): Promise<string[]> {
  const created = await Promise.all(
    Array.from({ length: OBJECTS }, (_, i) =>
      configMaps.create({ metadata: { namespace, name: `object-${i}`, labels: { sharded: 'yes' } } }),
    ),
  );
  return uidsOf(created);
}

describe('shardSelector on a server with ShardedListAndWatch on', () => {
  let controlPlane: ControlPlane;
  let client: KubeClient;
  let configMaps: Resource<KubeObject>;
  let uids: string[];

  before(async () => {
    controlPlane = await startControlPlane({
      apiServerFlags: ['--feature-gates=ShardedListAndWatch=true'],
      controllers: [],
      log: () => undefined,
    });
    client = new KubeClient(loadKubeConfig({ kubeconfig: controlPlane.kubeconfigPath }), {
      rateLimit: false,
    });
    configMaps = client.resource<KubeObject>(CONFIG_MAPS);
    uids = await createObjects(configMaps, 'default');
  });
  after(async () => {
    await client.close();
    await controlPlane.stop();
  });

  it('lists exactly the objects our hash puts in the selected buckets, and echoes the selector', async () => {
    const selector = shardSelector('object.metadata.uid', EVEN);
    assert.ok(selector !== undefined);
    const page = await configMaps.list({
      namespace: 'default',
      labelSelector: 'sharded=yes',
      shardSelector: selector,
    });
    assert.equal(page.shardSelector, selector);
    assert.deepEqual(uidsOf(page.items), uids.filter(even));
    // Both halves hold some of 40 uids, unless our hash is constant (p = 2^-39 otherwise).
    assert.ok(uidsOf(page.items).length > 0 && uidsOf(page.items).length < OBJECTS);
    const rest = await configMaps.list({
      namespace: 'default',
      labelSelector: 'sharded=yes',
      shardSelector: shardSelector('object.metadata.uid', ODD),
    });
    assert.deepEqual(
      uidsOf(rest.items),
      uids.filter((uid) => !even(uid)),
    );
  });

  it('selects by namespace: every object of a namespace, or none', async () => {
    const bucket = bucketOf(fnv1a64('default'));
    const mine = await configMaps.list({
      namespace: 'default',
      labelSelector: 'sharded=yes',
      shardSelector: shardSelector('object.metadata.namespace', [bucket]),
    });
    assert.equal(mine.items.length, OBJECTS);
    const others = await configMaps.list({
      namespace: 'default',
      labelSelector: 'sharded=yes',
      shardSelector: shardSelector('object.metadata.namespace', [(bucket + 1) % 256]),
    });
    assert.deepEqual(others.items, []);
  });

  it('watches only the selected objects', async () => {
    const start = await configMaps.list({ namespace: 'default', limit: 1 });
    const stop = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const event of configMaps.watch({
        namespace: 'default',
        labelSelector: 'sharded=yes',
        shardSelector: shardSelector('object.metadata.uid', EVEN),
        resourceVersion: start.resourceVersion,
        signal: stop.signal,
      })) {
        if (event.type === 'MODIFIED') seen.push(event.object.metadata?.uid ?? '');
        if (seen.length === uids.filter(even).length) stop.abort();
      }
    })();
    for (let i = 0; i < OBJECTS; i++) {
      await configMaps.patch(
        { namespace: 'default', name: `object-${i}` },
        { merge: { data: { touched: 'yes' } } },
      );
    }
    // The last even object's event ends the watch; an odd one would have been counted before it.
    await watching;
    assert.deepEqual(seen.sort(), uids.filter(even));
  });

  it('refuses a malformed selector: bounds are 16 hex digits (1.36.3 answers 500, not 400)', async () => {
    // Pinned as the server is: a change of its status code shows here. Ours never writes one
    // (space.test.ts checks every bound against the parser's rules).
    await assert.rejects(
      configMaps.list({ shardSelector: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')" }),
      (error: unknown) => isInternalError(error) && /16-digit hex value, got "0x0"/.test(String(error)),
    );
  });
});

describe('shardSelector on a server with ShardedListAndWatch off (the 1.36 default)', () => {
  let client: KubeClient;
  let ns: TestNamespace;

  before(async () => {
    const kubeConfig = loadTestKubeConfig();
    client = new KubeClient(kubeConfig, { rateLimit: false });
    ns = await createTestNamespace(kubeConfig, 'shard-off');
  });
  after(async () => {
    await ns.cleanup();
    await client.close();
  });

  it('is ignored: the whole collection, and no shardSelector in the answer', async () => {
    const configMaps = client.resource<KubeObject>(CONFIG_MAPS);
    const uids = await createObjects(configMaps, ns.name);
    const page = await configMaps.list({
      namespace: ns.name,
      labelSelector: 'sharded=yes',
      shardSelector: shardSelector('object.metadata.uid', EVEN),
    });
    assert.equal(page.shardSelector, undefined);
    assert.deepEqual(uidsOf(page.items), uids);
  });
});
