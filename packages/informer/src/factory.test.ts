import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SharedInformerFactory } from './factory.ts';
import { controllerOwnerIndex, labelIndex } from './indexers.ts';
import { ScriptedClient } from './test-helpers/scripted-client.ts';
import type { KubeObject, ListWatchScope } from './types.ts';

function setup() {
  const clients = new Map<string, ScriptedClient<KubeObject>>();
  const factory = new SharedInformerFactory({
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
});
