/**
 * The pod of {@link buildPod} as a protobuf request body: the fields it writes, numbered as
 * k8s.io/api's core/v1 generated.proto numbers them. A field buildPod starts writing must be added
 * here, or encoding throws (pod-protobuf.test.ts builds every kind of pod).
 */
import { encodeObject, type MessageSchema } from '@loopwright/client';
import type { Pod } from './resource.ts';

const OWNER_REFERENCE: MessageSchema = {
  apiVersion: [5, 'string'],
  kind: [1, 'string'],
  name: [3, 'string'],
  uid: [4, 'string'],
  controller: [6, 'bool'],
  blockOwnerDeletion: [7, 'bool'],
};

const OBJECT_META: MessageSchema = {
  name: [1, 'string'],
  namespace: [3, 'string'],
  labels: [11, { map: 'string' }],
  ownerReferences: [13, { messages: OWNER_REFERENCE }],
};

const SECCOMP_PROFILE: MessageSchema = { type: [1, 'string'] };

const POD_SECURITY_CONTEXT: MessageSchema = {
  runAsUser: [2, 'int64'],
  runAsNonRoot: [3, 'bool'],
  runAsGroup: [6, 'int64'],
  seccompProfile: [10, { message: SECCOMP_PROFILE }],
};

const SECURITY_CONTEXT: MessageSchema = {
  capabilities: [1, { message: { drop: [2, 'strings'] } }],
  runAsNonRoot: [5, 'bool'],
  allowPrivilegeEscalation: [7, 'bool'],
};

const RESOURCE_REQUIREMENTS: MessageSchema = {
  limits: [1, { map: 'quantity' }],
  requests: [2, { map: 'quantity' }],
};

const CONTAINER: MessageSchema = {
  name: [1, 'string'],
  image: [2, 'string'],
  command: [3, 'strings'],
  resources: [8, { message: RESOURCE_REQUIREMENTS }],
  securityContext: [15, { message: SECURITY_CONTEXT }],
  terminationMessagePolicy: [20, 'string'],
};

const POD_SPEC: MessageSchema = {
  containers: [2, { messages: CONTAINER }],
  restartPolicy: [3, 'string'],
  securityContext: [14, { message: POD_SECURITY_CONTEXT }],
  automountServiceAccountToken: [21, 'bool'],
  enableServiceLinks: [30, 'bool'],
};

const POD: MessageSchema = {
  metadata: [1, { message: OBJECT_META }],
  spec: [2, { message: POD_SPEC }],
};

/** `pod` (a pod of buildPod) in protobuf; throws a TypeError naming any field the schema lacks. */
export function encodePod(pod: Pod): Uint8Array {
  return encodeObject('v1', 'Pod', POD, pod as Readonly<Record<string, unknown>>);
}
