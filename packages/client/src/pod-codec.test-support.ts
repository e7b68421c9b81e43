/**
 * A minimal protobuf codec of Pods for the client's tests against the real API server: the encoder
 * writes the few fields the tests' pods have, the decoder reads `metadata` and skips the rest (the
 * controllers' codecs read more; what they share is tested here).
 */
import type { KubeObject } from './object.ts';
import { BinaryReader, readFields, WireType } from './protobuf.ts';
import { encodeObject, type MessageSchema } from './protobuf-encode.ts';
import { readObjectMeta } from './protobuf-list-watch.ts';
import type { ProtobufCodec } from './resource.ts';
import type { ResourceType } from './resource-type.ts';

export const PODS: ResourceType = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };

export interface TestPod extends KubeObject {
  spec?: { containers: { name: string; image: string }[] };
  status?: { phase?: string; message?: string };
}

const TEST_POD: MessageSchema = {
  metadata: [
    1,
    {
      message: {
        name: [1, 'string'],
        namespace: [3, 'string'],
        labels: [11, { map: 'string' }],
        annotations: [12, { map: 'string' }],
      },
    },
  ],
  spec: [2, { message: { containers: [2, { messages: { name: [1, 'string'], image: [2, 'string'] } }] } }],
};

/** A pod of one container, labelled. */
export function testPod(namespace: string, name: string, labels: Record<string, string> = {}): TestPod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, labels },
    spec: { containers: [{ name: 'c', image: 'busybox:1.37.0' }] },
  };
}

/** The pod's `metadata` alone: what every kind's decoder shares. */
export function decodePodMetadata(message: Uint8Array): TestPod {
  const reader = new BinaryReader(message);
  const pod: TestPod = {};
  readFields(reader, reader.len, (field, wireType) => {
    if (field !== 1 || wireType !== WireType.LengthDelimited) return false;
    pod.metadata = readObjectMeta(reader);
    return true;
  });
  return pod;
}

export const TEST_POD_CODEC: ProtobufCodec<TestPod> = {
  encode: (pod) => encodeObject('v1', 'Pod', TEST_POD, pod as Readonly<Record<string, unknown>>),
  decode: decodePodMetadata,
};
