/**
 * The protobuf decoders against a real API server: the same pods, errors and watch events read as
 * JSON and as protobuf must give the same objects, field by field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeApiError } from './api-error.ts';
import { KubeClient } from './client.ts';
import type { KubeObject, WatchEvent } from './object.ts';
import { PODS, TEST_POD_CODEC, testPod, type TestPod } from './pod-codec.test-support.ts';
import { PROTOBUF_MEDIA_TYPE } from './protobuf.ts';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from './real-server.test-support.ts';
import type { Resource } from './resource.ts';
import { objectPath } from './resource-type.ts';
import { KubeTransport } from './transport.ts';

const CONFIG_MAPS = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const LABEL = 'loopwright.dev/protobuf-test';

const client = new KubeClient(loadTestKubeConfig(), { rateLimit: false, fieldManager: 'protobuf-test' });
const pods: Resource<TestPod> = client.resource(PODS, { protobuf: TEST_POD_CODEC });
let ns: TestNamespace;

before(async () => {
  ns = await createTestNamespace(client, 'client-protobuf');
});
after(async () => {
  await ns.cleanup();
  await client.close();
});

/**
 * A ConfigMap to own the test's pods: kube-controller-manager's garbage collector deletes a pod whose
 * owners do not exist, which would race the comparisons.
 */
async function createOwner(name: string): Promise<string> {
  const configMaps = client.resource(CONFIG_MAPS);
  const key = { namespace: ns.name, name };
  const owner = (await configMaps.getOptional(key)) ?? (await configMaps.create({ metadata: key }));
  return owner.metadata?.uid ?? '';
}

/** Pods whose metadata uses every field the decoder reads, in the forms the API server sends them. */
async function createVariedPods(): Promise<void> {
  const [ownerUid, secondOwnerUid] = [await createOwner('owner'), await createOwner('second-owner')];
  const everything = testPod(ns.name, 'everything', {
    [LABEL]: 'yes',
    'app.kubernetes.io/name': 'x',
    empty: '',
  });
  await pods.create({
    ...everything,
    metadata: {
      ...everything.metadata,
      generateName: 'every-',
      annotations: { 'example.com/note': 'ünïcode ✓ and "quotes"', 'example.com/empty': '' },
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'owner',
          uid: ownerUid,
          controller: true,
          blockOwnerDeletion: false,
        },
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'second-owner', uid: secondOwnerUid },
      ],
      finalizers: ['example.com/hold', 'example.com/second'],
    },
  });
  const generated = testPod(ns.name, '', { [LABEL]: 'yes' });
  await pods.create({
    ...generated,
    metadata: { namespace: ns.name, generateName: 'generated-', labels: generated.metadata?.labels },
  });
  // Server-side apply and a status write: managedFields with both operations and a subresource.
  const key = { namespace: ns.name, name: 'everything' };
  await pods.apply({ metadata: { ...key, annotations: { 'example.com/applied': 'yes' } } });
  await pods.status.patch(key, { merge: { status: { phase: 'Running', message: 'set by the test' } } });
  // A finalizer holds the pod after its deletion: deletionTimestamp, and a grace period of 0.
  await pods.delete(key);
}

async function releasePods(): Promise<void> {
  await pods.patch({ namespace: ns.name, name: 'everything' }, { merge: { metadata: { finalizers: null } } });
}

describe('protobuf decoding against a real API server', () => {
  it('lists the same metadata as JSON, field by field', async () => {
    await createVariedPods();
    try {
      const json = await pods.list({ namespace: ns.name, labelSelector: LABEL });
      const protobuf = await pods.list({ namespace: ns.name, labelSelector: LABEL, encoding: 'protobuf' });
      assert.equal(json.items.length, 2);
      assert.equal(protobuf.resourceVersion, json.resourceVersion);
      const protobufByName = new Map(protobuf.items.map((item) => [item.metadata?.name ?? '', item]));
      for (const item of json.items) {
        const decoded = protobufByName.get(item.metadata?.name ?? '');
        assert.ok(decoded, `${item.metadata?.name} is in the protobuf list`);
        assert.deepStrictEqual(decoded.metadata, item.metadata);
        assert.equal(decoded.apiVersion, 'v1');
        assert.equal(decoded.kind, 'Pod');
      }
      // The fields that make this comparison worth something are really there.
      const everything = json.items.find((item) => item.metadata?.name === 'everything')?.metadata as Record<
        string,
        unknown
      >;
      for (const field of [
        'generateName',
        'deletionTimestamp',
        'deletionGracePeriodSeconds',
        'ownerReferences',
        'finalizers',
        'managedFields',
        'annotations',
      ]) {
        assert.ok(everything[field] !== undefined, `the JSON pod has ${field}`);
      }
      assert.equal(everything.deletionGracePeriodSeconds, 0);
    } finally {
      await releasePods();
    }
  });

  it('watches the same events as JSON, in the same order', async () => {
    const start = await pods.list({ namespace: ns.name });
    const watchOnce = async (encoding: 'json' | 'protobuf', until: number) => {
      const abort = new AbortController();
      const events: WatchEvent<TestPod>[] = [];
      for await (const event of pods.watch({
        namespace: ns.name,
        labelSelector: LABEL,
        resourceVersion: start.resourceVersion,
        timeoutSeconds: 20,
        encoding,
        signal: abort.signal,
      })) {
        if (event.type === 'BOOKMARK') continue;
        events.push(event);
        if (events.length === until) break;
      }
      abort.abort();
      return events;
    };
    await createVariedPods();
    await releasePods();
    // Create 2, apply, status, delete (a MODIFIED: the finalizer holds it), release (gone at once).
    const json = await watchOnce('json', 6);
    const protobuf = await watchOnce('protobuf', 6);
    const summary = (events: WatchEvent<TestPod>[]) =>
      events.map((event) => [
        event.type,
        event.object.apiVersion,
        event.object.kind,
        (event.object as KubeObject).metadata,
      ]);
    assert.deepStrictEqual(summary(protobuf), summary(json));
    assert.deepStrictEqual(
      json.map((event) => event.type),
      ['ADDED', 'ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED'],
    );
  });

  // A watch's ERROR event carries the same Status message (not reproducible on demand here: the watch
  // cache serves any old resourceVersion etcd still has); its envelope is unit-tested.
  it('reads an error response as a protobuf Status', async () => {
    // The transport itself: a handle's reads ask for JSON.
    const transport = new KubeTransport(loadTestKubeConfig(), { rateLimit: false });
    const failure = async (accept: string): Promise<KubeApiError> => {
      const path = objectPath(PODS, { namespace: ns.name, name: 'nope' });
      const error: unknown = await transport.request({ path, headers: { Accept: accept } }).then(
        () => assert.fail('a missing pod was found'),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof KubeApiError);
      return error;
    };
    try {
      const json = await failure('application/json');
      const protobuf = await failure(PROTOBUF_MEDIA_TYPE);
      assert.equal(protobuf.status, 404);
      assert.equal(protobuf.reason, 'NotFound');
      assert.equal(protobuf.message, json.message);
      assert.deepStrictEqual(protobuf.details, json.details);
      assert.deepStrictEqual(json.details, { name: 'nope', kind: 'pods' });
    } finally {
      transport.close();
    }
  });
});
