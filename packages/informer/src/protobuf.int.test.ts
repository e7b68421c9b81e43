/**
 * The protobuf decoders against a real API server: the same pods, errors and watch events read as
 * JSON and as protobuf must give the same objects, field by field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  BinaryReader,
  KubeApiError,
  KubeTransport,
  PROTOBUF_MEDIA_TYPE,
  readFields,
  WireType,
} from '@loopwright/client';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { Informer } from './informer.ts';
import { createResourceClient } from './list-watch.ts';
import { readObjectMeta, type ProtobufDecoder } from '@loopwright/client';
import type { KubeObject, WatchEvent } from './types.ts';

let kc: KubeConfig;
let transport: KubeTransport;
let ns: TestNamespace;

before(async () => {
  kc = loadTestKubeConfig();
  transport = new KubeTransport(kc);
  ns = await createTestNamespace(kc, 'informer-protobuf');
});
after(async () => {
  await ns.cleanup();
  transport.close();
});

/** A decoder of the pod's metadata alone: what every protobuf decoder shares. */
const decodeMetadata: ProtobufDecoder<KubeObject> = (message) => {
  const reader = new BinaryReader(message);
  const object: KubeObject = {};
  readFields(reader, reader.len, (field, wireType) => {
    if (field !== 1 || wireType !== WireType.LengthDelimited) return false;
    object.metadata = readObjectMeta(reader);
    return true;
  });
  return object;
};

const LABEL = 'loopwright.dev/protobuf-test';

function podsPath(query = ''): string {
  return `/api/v1/namespaces/${ns.name}/pods${query === '' ? '' : `?${query}`}`;
}

function pod(metadata: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...metadata, labels: { [LABEL]: 'yes', ...(metadata.labels as object | undefined) } },
    spec: { containers: [{ name: 'c', image: 'busybox:1.37.0' }] },
  };
}

/**
 * A ConfigMap to own the test's pods: kube-controller-manager's garbage collector deletes a pod whose
 * owners do not exist, which would race the comparisons.
 */
async function createOwner(name: string): Promise<string> {
  const path = `/api/v1/namespaces/${ns.name}/configmaps`;
  const existing = await transport
    .requestJson<KubeObject>({ path: `${path}/${name}` })
    .catch(() => undefined);
  const owner =
    existing ??
    (await transport.requestJson<KubeObject>({ method: 'POST', path, body: { metadata: { name } } }));
  return owner.metadata?.uid ?? '';
}

/** Pods whose metadata uses every field the decoder reads, in the forms the API server sends them. */
async function createVariedPods(): Promise<void> {
  const [ownerUid, secondOwnerUid] = [await createOwner('owner'), await createOwner('second-owner')];
  await transport.requestJson({
    method: 'POST',
    path: podsPath(),
    body: pod({
      name: 'everything',
      generateName: 'every-',
      labels: { 'app.kubernetes.io/name': 'x', empty: '' },
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
    }),
  });
  await transport.requestJson({
    method: 'POST',
    path: podsPath(),
    body: pod({ generateName: 'generated-' }),
  });
  // Server-side apply and a status write: managedFields with both operations and a subresource.
  await transport.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${ns.name}/pods/everything?fieldManager=protobuf-test`,
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
    body: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'everything', annotations: { 'example.com/applied': 'yes' } },
    }),
  });
  await transport.requestJson({
    method: 'PATCH',
    path: `/api/v1/namespaces/${ns.name}/pods/everything/status`,
    contentType: 'application/merge-patch+json',
    body: { status: { phase: 'Running', message: 'set by the test' } },
  });
  // A finalizer holds the pod after its deletion: deletionTimestamp, and a grace period of 0.
  await transport.requestJson({ method: 'DELETE', path: `/api/v1/namespaces/${ns.name}/pods/everything` });
}

async function releasePods(): Promise<void> {
  await transport.requestJson({
    method: 'PATCH',
    path: `/api/v1/namespaces/${ns.name}/pods/everything`,
    contentType: 'application/merge-patch+json',
    body: { metadata: { finalizers: null } },
  });
}

interface JsonPodList {
  metadata: { resourceVersion: string };
  items: KubeObject[];
}

async function listBothWays(): Promise<{ json: KubeObject[]; protobuf: KubeObject[] }> {
  const selector = `labelSelector=${encodeURIComponent(LABEL)}`;
  const json = await transport.requestJson<JsonPodList>({ path: podsPath(selector) });
  const protobuf = await podsClient(true).list(new AbortController().signal);
  return { json: json.items, protobuf: protobuf.items };
}

/** The list and watch of the test's pods, as JSON or as protobuf. */
function podsClient(protobuf: boolean) {
  return createResourceClient<KubeObject>({
    transport,
    group: '',
    version: 'v1',
    plural: 'pods',
    namespace: ns.name,
    labelSelector: LABEL,
    ...(protobuf ? { protobuf: decodeMetadata } : {}),
  });
}

function byName(objects: KubeObject[]): Map<string, KubeObject> {
  return new Map(objects.map((object) => [object.metadata?.name ?? '', object]));
}

describe('protobuf decoding against a real API server', () => {
  it('lists the same metadata as JSON, field by field', async () => {
    const before = await transport.requestJson<JsonPodList>({ path: podsPath() });
    await createVariedPods();
    try {
      const { json, protobuf } = await listBothWays();
      assert.equal(json.length, 2);
      const protobufByName = byName(protobuf);
      for (const item of json) {
        const decoded = protobufByName.get(item.metadata?.name ?? '');
        assert.ok(decoded, `${item.metadata?.name} is in the protobuf list`);
        assert.deepStrictEqual(decoded.metadata, item.metadata);
        assert.equal(decoded.apiVersion, 'v1');
        assert.equal(decoded.kind, 'Pod');
      }
      // The fields that make this comparison worth something are really there.
      const everything = json.find((item) => item.metadata?.name === 'everything')?.metadata as Record<
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
      assert.ok(before.metadata.resourceVersion !== '');
    } finally {
      await releasePods();
    }
  });

  it('watches the same events as JSON, in the same order', async () => {
    const start = await transport.requestJson<JsonPodList>({ path: podsPath() });
    const watchOnce = async (protobuf: boolean, resourceVersion: string, until: number) => {
      const abort = new AbortController();
      const events: WatchEvent<KubeObject>[] = [];
      const iterator = podsClient(protobuf).watch({
        resourceVersion,
        timeoutSeconds: 20,
        inactivityTimeoutMs: 30_000,
        signal: abort.signal,
      });
      for await (const event of iterator) {
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
    const json = await watchOnce(false, start.metadata.resourceVersion, 6);
    const protobuf = await watchOnce(true, start.metadata.resourceVersion, 6);
    assert.deepStrictEqual(
      protobuf.map((event) => [
        event.type,
        event.object.apiVersion,
        event.object.kind,
        (event.object as KubeObject).metadata,
      ]),
      json.map((event) => [
        event.type,
        event.object.apiVersion,
        event.object.kind,
        (event.object as KubeObject).metadata,
      ]),
    );
    assert.deepStrictEqual(
      json.map((event) => event.type),
      ['ADDED', 'ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED'],
    );
  });

  // A watch's ERROR event carries the same Status message (not reproducible on demand here: the watch
  // cache serves any old resourceVersion etcd still has); its envelope is unit-tested.
  it('reads an error response as a protobuf Status', async () => {
    const failure = async (accept: string) => {
      const error = await transport
        .request({ path: `/api/v1/namespaces/${ns.name}/pods/nope`, headers: { Accept: accept } })
        .then(
          () => assert.fail('a missing pod was found'),
          (caught: unknown) => caught,
        );
      assert.ok(error instanceof KubeApiError);
      return error;
    };
    const json = await failure('application/json');
    const protobuf = await failure(PROTOBUF_MEDIA_TYPE);
    assert.equal(protobuf.status, 404);
    assert.equal(protobuf.reason, 'NotFound');
    assert.equal(protobuf.message, json.message);
    assert.deepStrictEqual(protobuf.details, json.details);
  });

  it('keeps an informer of protobuf pods in step with the server', async () => {
    const informer = new Informer<KubeObject>({
      transport,
      group: '',
      version: 'v1',
      plural: 'pods',
      namespace: ns.name,
      labelSelector: 'informer-test=yes',
      protobuf: decodeMetadata,
      logger: { debug: () => undefined, warn: () => undefined, error: () => undefined },
    });
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (object) => seen.push(`add ${object.metadata?.name ?? ''}`),
      onUpdate: (_old, object) =>
        seen.push(`update ${object.metadata?.name ?? ''} ${object.metadata?.annotations?.step ?? ''}`),
      onDelete: (object) => seen.push(`delete ${object.metadata?.name ?? ''}`),
    });
    await transport.requestJson({
      method: 'POST',
      path: podsPath(),
      body: pod({ name: 'listed', labels: { 'informer-test': 'yes' } }),
    });
    informer.start();
    try {
      await informer.waitForSync();
      assert.deepStrictEqual(seen, ['add listed']);
      await transport.requestJson({
        method: 'POST',
        path: podsPath(),
        body: pod({ name: 'watched', labels: { 'informer-test': 'yes' } }),
      });
      await transport.requestJson({
        method: 'PATCH',
        path: `/api/v1/namespaces/${ns.name}/pods/watched`,
        contentType: 'application/merge-patch+json',
        body: { metadata: { annotations: { step: 'two' } } },
      });
      await transport.requestJson({ method: 'DELETE', path: `/api/v1/namespaces/${ns.name}/pods/listed` });
      await eventually(() => {
        assert.deepStrictEqual(seen, [
          'add listed',
          'add watched',
          'update watched two',
          'update listed ',
          'delete listed',
        ]);
      });
      assert.equal(informer.lister.get(ns.name, 'watched')?.metadata?.annotations?.step, 'two');
    } finally {
      informer.stop();
    }
  });
});
