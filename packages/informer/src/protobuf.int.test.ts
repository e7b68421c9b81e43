/**
 * An informer of a built-in kind read in protobuf, against a real API server. The decoding itself
 * (the same objects as JSON, field by field) is @loopwright/client's, tested there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  BinaryReader,
  coreV1Fields,
  KubeClient,
  readFields,
  readObjectMeta,
  WireType,
  type KubeObject,
  type ProtobufDecoder,
  type ResourceType,
} from '@loopwright/client';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { Informer } from './informer.ts';

const PODS: ResourceType = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };

let client: KubeClient;
let ns: TestNamespace;

before(async () => {
  const kc = loadTestKubeConfig();
  client = new KubeClient(kc);
  ns = await createTestNamespace(kc, 'informer-protobuf');
});
after(async () => {
  await ns.cleanup();
  await client.close();
});

/** A decoder of the pod's metadata alone. */
const decodeMetadata: ProtobufDecoder<KubeObject> = (message) => {
  const reader = new BinaryReader(message);
  const object: KubeObject = {};
  readFields(reader, reader.len, (field, wireType) => {
    if (field !== coreV1Fields.Pod.metadata || wireType !== WireType.LengthDelimited) return false;
    object.metadata = readObjectMeta(reader);
    return true;
  });
  return object;
};

function pod(name: string): KubeObject & { spec: object } {
  return {
    metadata: { namespace: ns.name, name, labels: { 'informer-test': 'yes' } },
    spec: { containers: [{ name: 'c', image: 'busybox:1.37.0' }] },
  };
}

describe('an informer of protobuf pods', () => {
  it('keeps in step with the server', async () => {
    const pods = client.resource<KubeObject & { spec?: object }>(PODS);
    const informer = new Informer<KubeObject>({
      client,
      ...PODS,
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
    await pods.create(pod('listed'));
    informer.start();
    try {
      await informer.waitForSync();
      assert.deepStrictEqual(seen, ['add listed']);
      await pods.create(pod('watched'));
      await pods.patch(
        { namespace: ns.name, name: 'watched' },
        { merge: { metadata: { annotations: { step: 'two' } } } },
      );
      await pods.delete({ namespace: ns.name, name: 'listed' });
      await eventually(() => {
        assert.deepStrictEqual(seen, [
          'add listed',
          'add watched',
          'update watched two',
          'update listed ',
          'delete listed',
        ]);
      });
      const watched = informer.lister.get(ns.name, 'watched');
      assert.equal(watched?.metadata?.annotations?.step, 'two');
      assert.deepEqual([watched.apiVersion, watched.kind], ['v1', 'Pod']);
    } finally {
      informer.stop();
    }
  });
});
