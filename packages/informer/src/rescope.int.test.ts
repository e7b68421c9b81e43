/**
 * Re-scoping on the real kube-apiserver with ShardedListAndWatch on (a control plane of this file's
 * own; the gate is off by default in 1.36): the cache holds exactly what the server selects, a watch
 * carries the selector, and a re-scope moves the cache to the other half with deletes for what left.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeClient, loadKubeConfig, type KubeObject, type Resource } from '@loopwright/client';
import { eventually, startControlPlane, type ControlPlane } from '@loopwright/envtest';
import { Informer } from './informer.ts';
import { recordingLogger } from './scripted-client.test-support.ts';

type Cm = KubeObject & { data?: Record<string, string> };

const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const OBJECTS = 40;
/** The two halves of the uid hash space, written as the runtime's `shardSelector` writes them. */
const LOW = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
const HIGH = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";
const SCOPE = { ...CONFIGMAPS, namespace: 'default', labelSelector: 'rescope=yes' };

const sorted = (items: KubeObject[]): string[] => items.map((item) => item.metadata?.name ?? '').sort();

describe('Informer.rescope on a server with ShardedListAndWatch on', () => {
  let controlPlane: ControlPlane;
  let client: KubeClient;
  let configMaps: Resource<Cm>;

  /** What the server itself selects: the truth the cache must equal. */
  async function selected(shardSelector: string): Promise<string[]> {
    const page = await configMaps.list({ ...SCOPE, shardSelector });
    assert.equal(page.shardSelector, shardSelector, 'the server applies the selector');
    return sorted(page.items);
  }

  before(async () => {
    controlPlane = await startControlPlane({
      apiServerFlags: ['--feature-gates=ShardedListAndWatch=true'],
      controllers: [],
      log: () => undefined,
    });
    client = new KubeClient(loadKubeConfig({ kubeconfig: controlPlane.kubeconfigPath }), {
      rateLimit: false,
    });
    configMaps = client.resource<Cm>(CONFIGMAPS);
    for (let i = 0; i < OBJECTS; i++) {
      await configMaps.create({
        metadata: { namespace: 'default', name: `cm-${i}`, labels: { rescope: 'yes' } },
      });
    }
  });
  after(async () => {
    await client.close();
    await controlPlane.stop();
  });

  it('caches one half, watches it, and moves to the other half on a re-scope', async () => {
    const informer = new Informer<Cm>({ client, ...SCOPE, logger: recordingLogger() });
    const deleted: string[] = [];
    const updated: string[] = [];
    informer.addEventHandler({
      onUpdate: (_old, obj) => updated.push(obj.metadata?.name ?? ''),
      onDelete: (obj, { finalStateUnknown }) => {
        if (finalStateUnknown) deleted.push(obj.metadata?.name ?? '');
      },
    });
    const low = await selected(LOW);
    const high = await selected(HIGH);
    // Both halves hold some of 40 uids (p = 2^-39 otherwise).
    assert.ok(low.length > 0 && high.length > 0);
    assert.deepEqual([...low, ...high].sort(), sorted((await configMaps.list(SCOPE)).items));
    try {
      const first = informer.rescope(LOW);
      informer.start();
      await first;
      assert.deepEqual(sorted(informer.lister.list()), low);

      // The watch carries the selector: a change to every object reaches the cache for its half only.
      for (let i = 0; i < OBJECTS; i++) {
        await configMaps.patch({ namespace: 'default', name: `cm-${i}` }, { merge: { data: { v: '2' } } });
      }
      await eventually(() => {
        assert.deepEqual([...new Set(updated)].sort(), low);
      });
      assert.deepEqual(sorted(informer.lister.list()), low);

      await informer.rescope(HIGH, AbortSignal.timeout(20_000));
      assert.deepEqual(sorted(informer.lister.list()), high);
      assert.deepEqual(deleted.sort(), low, 'the half that left is deleted from the cache');
      assert.ok(informer.lister.list().every((obj) => obj.data?.v === '2'));

      await informer.rescope(undefined);
      assert.deepEqual(informer.lister.list(), []);
    } finally {
      informer.stop();
    }
  });
});
