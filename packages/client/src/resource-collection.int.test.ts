/**
 * The handle's collection delete and field validation against the real API server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeApiError } from './api-error.ts';
import { isBadRequest } from './classify.ts';
import { KubeClient } from './client.ts';
import type { KubeObject } from './object.ts';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from './real-server.test-support.ts';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const client = new KubeClient(loadTestKubeConfig(), { rateLimit: false, fieldManager: 'collection-test' });
const configMaps = client.resource<ConfigMap>({
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
});
let ns: TestNamespace;

before(async () => {
  ns = await createTestNamespace(client, 'collection');
});

after(async () => {
  await ns.cleanup();
  await client.close();
});

const names = async (labelSelector?: string): Promise<string[]> =>
  (
    await configMaps.list({ namespace: ns.name, ...(labelSelector === undefined ? {} : { labelSelector }) })
  ).items
    .map((item) => item.metadata?.name ?? '')
    .filter((name) => name !== 'kube-root-ca.crt')
    .sort();

describe('deleteCollection', () => {
  it('deletes what the selector picks in the namespace, nothing else; dryRun deletes nothing', async () => {
    for (const [name, tier] of [
      ['a', 'x'],
      ['b', 'x'],
      ['c', 'y'],
    ] as const) {
      await configMaps.create({ metadata: { namespace: ns.name, name, labels: { tier } } });
    }
    await configMaps.deleteCollection({ namespace: ns.name, labelSelector: 'tier=x', dryRun: true });
    assert.deepEqual(await names(), ['a', 'b', 'c']);
    await configMaps.deleteCollection({ namespace: ns.name, labelSelector: 'tier=x' });
    assert.deepEqual(await names(), ['c']);
  });
});

describe('fieldValidation', () => {
  it('Strict refuses a field the schema does not know; without it the field is dropped', async () => {
    const unknown = {
      metadata: { namespace: ns.name, name: 'strict' },
      data: {},
      colour: 'red',
    } as ConfigMap;
    const error = await configMaps.create(unknown, { fieldValidation: 'Strict' }).then(
      () => assert.fail('a Strict create with an unknown field resolved'),
      (e: unknown) => e as KubeApiError,
    );
    assert.ok(isBadRequest(error), String(error));
    assert.match(error.message, /colour/);
    const created = await configMaps.create(unknown, { fieldValidation: 'Ignore' });
    assert.equal((created as Record<string, unknown>).colour, undefined);
  });
});
