import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@loopwright/client';
import { SharedInformerFactory, type ResourceClient } from '@loopwright/informer';
import { cacheDump, startCacheDumpServer, type CachedScope } from './cache-dump.ts';

const configMap = (namespace: string | undefined, name: string, resourceVersion: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { ...(namespace === undefined ? {} : { namespace }), name, resourceVersion },
});

/** A factory whose every scope lists `items` once, then watches quietly until stopped. */
function factoryListing(items: KubeObject[]): SharedInformerFactory {
  const client: ResourceClient<KubeObject> = {
    resource: 'configmaps',
    type: { group: '', version: 'v1', plural: 'configmaps' },
    list: () => Promise.resolve({ items, resourceVersion: '42' }),
    watch: ({ signal }) => ({
      [Symbol.asyncIterator]: () => ({
        // No event, ever: the watch ends when the informer stops.
        next: () =>
          new Promise<IteratorResult<never>>((resolve) => {
            signal.addEventListener(
              'abort',
              () => {
                resolve({ done: true, value: undefined });
              },
              { once: true },
            );
          }),
      }),
    }),
  };
  return new SharedInformerFactory({ initialSync: 'list', createClient: () => client });
}

describe('cache dump', () => {
  it("names each informer's scope, whether it synced, and every cached object's resourceVersion", async () => {
    const factory = factoryListing([configMap('a', 'one', '7'), configMap(undefined, 'cluster-wide', '9')]);
    factory.forResource({
      group: '',
      version: 'v1',
      plural: 'configmaps',
      namespace: 'a',
      labelSelector: 'x=y',
    });
    const before = cacheDump(factory);
    assert.deepEqual(before, [
      {
        group: '',
        version: 'v1',
        plural: 'configmaps',
        namespace: 'a',
        labelSelector: 'x=y',
        synced: false,
        objects: {},
      } satisfies CachedScope,
    ]);
    factory.start();
    await factory.waitForCacheSync();
    assert.deepEqual(cacheDump(factory)[0], {
      ...before[0],
      synced: true,
      resourceVersion: '42',
      objects: { 'a/one': '7', 'cluster-wide': '9' },
    });
    factory.stop();
  });

  it('serves it as JSON at GET /cache only, until closed', async () => {
    const factory = factoryListing([configMap('a', 'one', '7')]);
    factory.forResource({ group: '', version: 'v1', plural: 'configmaps' });
    factory.start();
    await factory.waitForCacheSync();
    const server = await startCacheDumpServer({ port: 0, host: '127.0.0.1' }, factory);
    const url = `http://127.0.0.1:${server.port}`;
    try {
      const response = await fetch(`${url}/cache`);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), cacheDump(factory));
      const other = await fetch(`${url}/metrics`);
      await other.arrayBuffer();
      assert.equal(other.status, 404);
    } finally {
      await server.close();
      factory.stop();
    }
    await assert.rejects(fetch(`${url}/cache`));
  });
});
