import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SharedInformerFactory } from './factory.ts';
import { controllerOwnerIndex, labelIndex } from './indexers.ts';
import { ScriptedClient } from './scripted-client.test-support.ts';
import type { KubeObject } from '@loopwright/client';
import type { ListWatchScope } from './types.ts';
import type { InitialSync } from './streaming-list.ts';

function setup(transform?: (obj: KubeObject) => KubeObject, initialSync: InitialSync = 'list') {
  const clients = new Map<string, ScriptedClient<KubeObject>>();
  const factory = new SharedInformerFactory({
    ...(transform === undefined ? {} : { transform }),
    initialSync,
    createClient: (scope: ListWatchScope) => {
      const client = new ScriptedClient<KubeObject>();
      clients.set(JSON.stringify(scope), client);
      return client;
    },
  });
  return { factory, clients };
}

const configMaps = { group: '', version: 'v1', plural: 'configmaps' };

describe('SharedInformerFactory', () => {
  it('returns the same informer for the same resource, namespace and selectors', () => {
    const { factory, clients } = setup();
    const a = factory.forResource({ ...configMaps, namespace: 'ns' });
    const b = factory.forResource({ ...configMaps, namespace: 'ns', resyncMs: 1000 });
    assert.equal(a, b);
    assert.notEqual(factory.forResource({ ...configMaps }), a);
    assert.notEqual(factory.forResource({ ...configMaps, namespace: 'ns', labelSelector: 'app=x' }), a);
    assert.notEqual(
      factory.forResource({ ...configMaps, namespace: 'ns', fieldSelector: 'metadata.name=x' }),
      a,
    );
    assert.notEqual(
      factory.forResource({ group: 'apps', version: 'v1', plural: 'deployments', namespace: 'ns' }),
      a,
    );
    assert.equal(clients.size, 5, 'one list/watch per key');
    factory.stop();
  });

  it('names every scope it serves with its informer, once per scope', () => {
    const { factory } = setup();
    const all = factory.forResource({ ...configMaps, resyncMs: 1000 });
    factory.forResource({ ...configMaps });
    const selected = factory.forResource({ ...configMaps, namespace: 'ns', labelSelector: 'app=x' });
    assert.deepEqual(factory.scopes(), [
      { scope: configMaps, informer: all },
      { scope: { ...configMaps, namespace: 'ns', labelSelector: 'app=x' }, informer: selected },
    ]);
    factory.stop();
  });

  it('starts informers, also ones requested after start, and waits for all to sync', async () => {
    const { factory, clients } = setup();
    const early = factory.forResource(configMaps);
    factory.start();
    const late = factory.forResource({ ...configMaps, namespace: 'late' });
    const synced = factory.waitForCacheSync();
    for (const client of clients.values()) client.scriptList({ items: [], resourceVersion: '1' });
    await synced;
    assert.ok(early.hasSynced() && late.hasSynced());
    factory.stop();
    assert.throws(() => factory.forResource(configMaps), /stopped/);
  });

  it('gives its informers its initialSync setting', async () => {
    for (const initialSync of ['list', 'watch-list'] as const) {
      const { factory, clients } = setup(undefined, initialSync);
      factory.forResource(configMaps);
      factory.start();
      const [client] = clients.values();
      assert.ok(client !== undefined);
      if (initialSync === 'list') {
        client.scriptList({ items: [], resourceVersion: '1' });
        assert.equal((await client.watchNumber(0)).request.sendInitialEvents, undefined);
        assert.equal(client.listCalls, 1);
      } else {
        assert.equal((await client.watchNumber(0)).request.sendInitialEvents, true);
        assert.equal(client.listCalls, 0);
      }
      factory.stop();
    }
  });

  it('shares indexers by name and refuses a different function under a taken name', () => {
    const { factory } = setup();
    const informer = factory.forResource({ ...configMaps, indexers: { byOwner: controllerOwnerIndex } });
    factory.forResource({
      ...configMaps,
      indexers: { byOwner: controllerOwnerIndex, byApp: labelIndex('app') },
    });
    assert.deepEqual(informer.lister.byIndex('byApp', 'x'), []);
    assert.throws(
      () => factory.forResource({ ...configMaps, indexers: { byOwner: labelIndex('owner') } }),
      /different function/,
    );
    factory.stop();
  });

  it('accepts the same built-in index under a taken name from two callers that each call labelIndex', () => {
    const { factory } = setup();
    const informer = factory.forResource({ ...configMaps, indexers: { byApp: labelIndex('app') } });
    assert.doesNotThrow(() => factory.forResource({ ...configMaps, indexers: { byApp: labelIndex('app') } }));
    assert.deepEqual(informer.lister.byIndex('byApp', 'x'), []);
    assert.throws(
      () => factory.forResource({ ...configMaps, indexers: { byApp: labelIndex('tier') } }),
      /different function/,
    );
    factory.stop();
  });

  describe("a scope's protobuf decoder", () => {
    const decodeA = (): KubeObject => ({ metadata: { name: 'a' } });
    const decodeB = (): KubeObject => ({ metadata: { name: 'b' } });

    it('refuses a different decoder for a scope created with one', () => {
      const { factory, clients } = setup();
      const informer = factory.forResource({ ...configMaps, namespace: 'ns', protobuf: decodeA });
      assert.throws(
        () => factory.forResource({ ...configMaps, namespace: 'ns', protobuf: decodeB }),
        /^Error: informer for configmaps in ns has a different protobuf decoder: name its decoder in the request that creates the scope$/,
      );
      assert.equal(factory.forResource({ ...configMaps, namespace: 'ns', protobuf: decodeA }), informer);
      assert.equal(clients.size, 1, 'no second list/watch for the refused request');
      factory.stop();
    });

    it('refuses a decoder for a scope created without one: it is read as JSON', () => {
      const { factory } = setup();
      const informer = factory.forResource({ ...configMaps, labelSelector: 'app=x' });
      assert.throws(
        () => factory.forResource({ ...configMaps, labelSelector: 'app=x', protobuf: decodeA }),
        /^Error: informer for configmaps in all namespaces \(app=x\) is read as JSON: name its decoder in the request that creates the scope$/,
      );
      assert.equal(factory.forResource({ ...configMaps, labelSelector: 'app=x' }), informer);
      factory.stop();
    });

    it('accepts the same decoder again, and a later request that names none', () => {
      const { factory, clients } = setup();
      const informer = factory.forResource({ ...configMaps, namespace: 'ns', protobuf: decodeA });
      assert.equal(factory.forResource({ ...configMaps, namespace: 'ns', protobuf: decodeA }), informer);
      assert.equal(factory.forResource({ ...configMaps, namespace: 'ns' }), informer);
      assert.notEqual(
        factory.forResource({ ...configMaps, namespace: 'other', protobuf: decodeB }),
        informer,
      );
      assert.equal(clients.size, 2);
      factory.stop();
    });
  });

  describe("a scope's own transform", () => {
    /** Appends `step` to the object's `steps` annotation: shows which transforms ran, in which order. */
    const mark =
      (step: string) =>
      (obj: KubeObject): KubeObject => {
        const annotations = obj.metadata?.annotations ?? {};
        const steps = annotations['steps'];
        return {
          ...obj,
          metadata: {
            ...obj.metadata,
            annotations: { steps: steps === undefined ? step : `${steps},${step}` },
          },
        };
      };
    const configMap = (name: string): KubeObject => ({
      metadata: { name, namespace: 'ns', resourceVersion: '1' },
    });

    /** Starts the factory, lists one object per scope, and returns each scope's `steps`. */
    async function listOne(factory: SharedInformerFactory, clients: Map<string, ScriptedClient<KubeObject>>) {
      factory.start();
      const synced = factory.waitForCacheSync();
      for (const client of clients.values())
        client.scriptList({ items: [configMap('a')], resourceVersion: '1' });
      await synced;
    }
    const steps = (informer: { lister: { get(ns: string, name: string): KubeObject | undefined } }) =>
      informer.lister.get('ns', 'a')?.metadata?.annotations?.['steps'];

    it("runs after the factory's transform, on its scope only", async () => {
      const { factory, clients } = setup(mark('common'));
      const own = factory.forResource({ ...configMaps, namespace: 'ns', transform: mark('own') });
      const other = factory.forResource({ ...configMaps, namespace: 'ns', labelSelector: 'app=x' });
      await listOne(factory, clients);
      assert.equal(steps(own), 'common,own');
      assert.equal(steps(other), 'common');
      factory.stop();
    });

    it('applies when a later request names it before start, and the same function may be named again', async () => {
      const { factory, clients } = setup();
      const own = mark('own');
      const informer = factory.forResource({ ...configMaps, namespace: 'ns' });
      assert.equal(factory.forResource({ ...configMaps, namespace: 'ns', transform: own }), informer);
      assert.equal(factory.forResource({ ...configMaps, namespace: 'ns', transform: own }), informer);
      await listOne(factory, clients);
      assert.equal(steps(informer), 'own');
      factory.stop();
    });

    it('refuses a different function, and a first one once the scope is cached', async () => {
      const { factory, clients } = setup();
      const informer = factory.forResource({ ...configMaps, namespace: 'ns', transform: mark('own') });
      assert.throws(
        () => factory.forResource({ ...configMaps, namespace: 'ns', transform: mark('own') }),
        /^Error: informer for configmaps in ns already has a different transform/,
      );
      const plain = factory.forResource({ ...configMaps, labelSelector: 'app=x' });
      await listOne(factory, clients);
      assert.equal(steps(informer), 'own', 'the refused transform is not applied');
      assert.throws(
        () => factory.forResource({ ...configMaps, labelSelector: 'app=x', transform: mark('late') }),
        /^Error: informer for configmaps in all namespaces \(app=x\) is already cached/,
      );
      assert.equal(steps(plain), undefined);
      factory.stop();
    });

    it('may come with a scope first requested after start', async () => {
      const { factory, clients } = setup();
      factory.start();
      const late = factory.forResource({ ...configMaps, namespace: 'ns', transform: mark('own') });
      const synced = factory.waitForCacheSync();
      for (const client of clients.values())
        client.scriptList({ items: [configMap('a')], resourceVersion: '1' });
      await synced;
      assert.equal(steps(late), 'own');
      factory.stop();
    });
  });
});
