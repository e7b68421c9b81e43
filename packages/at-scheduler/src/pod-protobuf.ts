/**
 * The pod of {@link buildPod} as a protobuf request body: the fields it writes, numbered by the
 * client's table of k8s.io/api's core/v1 generated.proto (`coreV1Fields`, checked against the proto
 * files there). A field buildPod starts writing must be added here (and to the table), or encoding
 * throws (pod-protobuf.test.ts builds every kind of pod).
 */
import { coreV1Fields, encodeObject, metaV1Fields, type MessageSchema } from '@loopwright/client';
import type { Pod } from './resource.ts';

const { ObjectMeta, OwnerReference } = metaV1Fields;
const {
  Pod: PodFields,
  PodSpec,
  PodSecurityContext,
  SeccompProfile,
  Container,
  ResourceRequirements,
  SecurityContext,
  Capabilities,
} = coreV1Fields;

const OWNER_REFERENCE: MessageSchema = {
  apiVersion: [OwnerReference.apiVersion, 'string'],
  kind: [OwnerReference.kind, 'string'],
  name: [OwnerReference.name, 'string'],
  uid: [OwnerReference.uid, 'string'],
  controller: [OwnerReference.controller, 'bool'],
  blockOwnerDeletion: [OwnerReference.blockOwnerDeletion, 'bool'],
};

const OBJECT_META: MessageSchema = {
  name: [ObjectMeta.name, 'string'],
  namespace: [ObjectMeta.namespace, 'string'],
  labels: [ObjectMeta.labels, { map: 'string' }],
  ownerReferences: [ObjectMeta.ownerReferences, { messages: OWNER_REFERENCE }],
  finalizers: [ObjectMeta.finalizers, 'strings'],
};

const SECCOMP_PROFILE: MessageSchema = { type: [SeccompProfile.type, 'string'] };

const POD_SECURITY_CONTEXT: MessageSchema = {
  runAsUser: [PodSecurityContext.runAsUser, 'int64'],
  runAsNonRoot: [PodSecurityContext.runAsNonRoot, 'bool'],
  runAsGroup: [PodSecurityContext.runAsGroup, 'int64'],
  seccompProfile: [PodSecurityContext.seccompProfile, { message: SECCOMP_PROFILE }],
};

const SECURITY_CONTEXT: MessageSchema = {
  capabilities: [SecurityContext.capabilities, { message: { drop: [Capabilities.drop, 'strings'] } }],
  runAsNonRoot: [SecurityContext.runAsNonRoot, 'bool'],
  allowPrivilegeEscalation: [SecurityContext.allowPrivilegeEscalation, 'bool'],
};

const RESOURCE_REQUIREMENTS: MessageSchema = {
  limits: [ResourceRequirements.limits, { map: 'quantity' }],
  requests: [ResourceRequirements.requests, { map: 'quantity' }],
};

const CONTAINER: MessageSchema = {
  name: [Container.name, 'string'],
  image: [Container.image, 'string'],
  command: [Container.command, 'strings'],
  resources: [Container.resources, { message: RESOURCE_REQUIREMENTS }],
  securityContext: [Container.securityContext, { message: SECURITY_CONTEXT }],
  terminationMessagePolicy: [Container.terminationMessagePolicy, 'string'],
};

const POD_SPEC: MessageSchema = {
  containers: [PodSpec.containers, { messages: CONTAINER }],
  restartPolicy: [PodSpec.restartPolicy, 'string'],
  securityContext: [PodSpec.securityContext, { message: POD_SECURITY_CONTEXT }],
  automountServiceAccountToken: [PodSpec.automountServiceAccountToken, 'bool'],
  enableServiceLinks: [PodSpec.enableServiceLinks, 'bool'],
};

const POD: MessageSchema = {
  metadata: [PodFields.metadata, { message: OBJECT_META }],
  spec: [PodFields.spec, { message: POD_SPEC }],
};

/** `pod` (a pod of buildPod) in protobuf; throws a TypeError naming any field the schema lacks. */
export function encodePod(pod: Pod): Uint8Array {
  return encodeObject('v1', 'Pod', POD, pod as Readonly<Record<string, unknown>>);
}
