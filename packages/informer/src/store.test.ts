import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { controllerOwnerIndex, labelIndex, NAMESPACE_INDEX, objectKey } from './indexers.ts';
import { Store } from './store.ts';
import type { KubeObject } from '@loopwright/client';

function pod(
  namespace: string | undefined,
  name: string,
  extra: Partial<NonNullable<KubeObject['metadata']>> = {},
): KubeObject {
  return {
    metadata: { name, ...(namespace === undefined ? {} : { namespace }), resourceVersion: '1', ...extra },
  };
}

const owner = (uid: string, controller: boolean | undefined) => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  name: `rs-${uid}`,
  uid,
  ...(controller === undefined ? {} : { controller }),
});

describe('objectKey', () => {
  it('is namespace/name for namespaced and name for cluster-scoped objects', () => {
    assert.equal(objectKey(pod('ns', 'a')), 'ns/a');
    assert.equal(objectKey(pod(undefined, 'node-1')), 'node-1');
    assert.equal(objectKey(pod('', 'node-1')), 'node-1');
  });
});

describe('Store', () => {
  it('gets by namespace and name, lists all and per namespace', () => {
    const store = new Store();
    store.upsert(pod('a', 'x'));
    store.upsert(pod('a', 'y'));
    store.upsert(pod('b', 'x'));
    store.upsert(pod(undefined, 'cluster'));
    assert.equal(store.get('a', 'x')?.metadata?.namespace, 'a');
    assert.equal(store.get('b', 'y'), undefined);
    assert.equal(store.get(undefined, 'cluster')?.metadata?.name, 'cluster');
    assert.equal(store.list().length, 4);
    assert.deepEqual(store.list('a').map(objectKey).sort(), ['a/x', 'a/y']);
    assert.deepEqual(store.list('missing'), []);
  });

  it('keeps objects of the same name apart per namespace, cluster-scoped ones under ""', () => {
    const store = new Store();
    store.upsert(pod('a', 'x', { resourceVersion: '1' }));
    store.upsert(pod('b', 'x', { resourceVersion: '2' }));
    store.upsert(pod(undefined, 'x', { resourceVersion: '3' }));
    assert.equal(store.size, 3);
    assert.equal(store.get('a', 'x')?.metadata?.resourceVersion, '1');
    assert.equal(store.get('b', 'x')?.metadata?.resourceVersion, '2');
    assert.equal(store.get('', 'x')?.metadata?.resourceVersion, '3');
    assert.equal(store.upsert(pod('b', 'x', { resourceVersion: '4' }))?.metadata?.resourceVersion, '2');
    assert.equal(store.size, 3, 'a replacement is not a new object');
    assert.equal(store.delete(undefined, 'x')?.metadata?.resourceVersion, '3');
    assert.equal(store.delete('c', 'x'), undefined);
    assert.equal(store.size, 2);
    assert.deepEqual(store.list('').map(objectKey), []);
    assert.deepEqual(store.list().map(objectKey).sort(), ['a/x', 'b/x']);
  });

  it('serves the namespace index from its per-namespace maps, also after a namespace emptied', () => {
    const store = new Store();
    store.upsert(pod('a', 'x'));
    store.upsert(pod('a', 'y'));
    store.upsert(pod(undefined, 'node-1'));
    assert.deepEqual(store.byIndex(NAMESPACE_INDEX, 'a').map(objectKey), ['a/x', 'a/y']);
    assert.deepEqual(store.byIndex(NAMESPACE_INDEX, '').map(objectKey), ['node-1']);
    store.delete('a', 'x');
    store.delete('a', 'y');
    assert.deepEqual(store.byIndex(NAMESPACE_INDEX, 'a'), []);
    store.upsert(pod('a', 'z'));
    assert.deepEqual(store.list('a').map(objectKey), ['a/z']);
    assert.throws(() => {
      store.addIndexers({ [NAMESPACE_INDEX]: () => [] });
    }, /already exists/);
  });

  it('indexes by controller owner UID, ignoring non-controller owners', () => {
    const store = new Store({ byOwner: controllerOwnerIndex });
    store.upsert(pod('ns', 'p1', { ownerReferences: [owner('u1', true)] }));
    store.upsert(pod('ns', 'p2', { ownerReferences: [owner('u2', false), owner('u1', true)] }));
    store.upsert(pod('ns', 'p3', { ownerReferences: [owner('u1', undefined)] }));
    assert.deepEqual(store.byIndex('byOwner', 'u1').map(objectKey).sort(), ['ns/p1', 'ns/p2']);
    assert.deepEqual(store.byIndex('byOwner', 'u2'), []);
  });

  it('moves an object between index values on update and drops it on delete', () => {
    const store = new Store({ byApp: labelIndex('app') });
    store.upsert(pod('ns', 'p', { labels: { app: 'web' } }));
    assert.equal(store.byIndex('byApp', 'web').length, 1);
    const previous = store.upsert(pod('ns', 'p', { labels: { app: 'db' }, resourceVersion: '2' }));
    assert.equal(previous?.metadata?.labels?.app, 'web');
    assert.deepEqual(store.byIndex('byApp', 'web'), []);
    assert.equal(store.byIndex('byApp', 'db')[0]?.metadata?.resourceVersion, '2');
    store.upsert(pod('ns', 'p', { resourceVersion: '3' }));
    assert.deepEqual(store.byIndex('byApp', 'db'), []);
    store.upsert(pod('ns', 'p', { labels: { app: 'db' }, resourceVersion: '4' }));
    assert.equal(store.delete('ns', 'p')?.metadata?.resourceVersion, '4');
    assert.deepEqual(store.byIndex('byApp', 'db'), []);
    assert.equal(store.list('ns').length, 0);
    assert.equal(store.delete('ns', 'p'), undefined);
    assert.equal(store.size, 0);
  });

  it('indexes existing objects when an indexer is added later, and rejects duplicates and unknown names', () => {
    const store = new Store();
    store.upsert(pod('ns', 'p', { labels: { tier: 'fe' } }));
    store.addIndexers({ byTier: labelIndex('tier') });
    assert.equal(store.byIndex('byTier', 'fe').length, 1);
    assert.throws(() => {
      store.addIndexers({ byTier: labelIndex('tier') });
    }, /already exists/);
    assert.throws(() => store.byIndex('nope', 'x'), /does not exist/);
  });

  it('supports multi-valued index functions', () => {
    const store = new Store({ byKey: (obj) => Object.keys(obj.metadata?.labels ?? {}) });
    store.upsert(pod('ns', 'p', { labels: { a: '1', b: '2' } }));
    assert.equal(store.byIndex('byKey', 'a').length, 1);
    assert.equal(store.byIndex('byKey', 'b').length, 1);
  });
});
