/**
 * The numbers of the API server's protobuf wire, written once: the `k8s\0` prefix of every object,
 * and the field numbers of each message that a decoder or encoder here or in a controller reads or
 * writes, by message and field name as k8s.io's `generated.proto` files have them (a field's name is
 * its JSON name). Code names a field through this table, never by a literal number.
 *
 * `proto-fields.test.ts` checks every entry against the vendored `generated.proto` files of the
 * Kubernetes version the test control plane runs (`vendor/`). A decoder or encoder that needs another
 * field adds it here, and the check covers it.
 */

/** Every object's bytes start with `k8s\0`, then a `runtime.Unknown` wraps the message. */
export const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** A `map<K, V>` field's entries: the protobuf language's own numbering, in no generated.proto. */
export const MAP_ENTRY = { key: 1, value: 2 } as const;

/** `k8s.io/apimachinery/pkg/runtime`. */
export const runtimeFields = {
  Unknown: { typeMeta: 1, raw: 2, contentEncoding: 3, contentType: 4 },
  TypeMeta: { apiVersion: 1, kind: 2 },
  RawExtension: { raw: 1 },
} as const;

/** `k8s.io/apimachinery/pkg/apis/meta/v1`. */
export const metaV1Fields = {
  ObjectMeta: {
    name: 1,
    generateName: 2,
    namespace: 3,
    selfLink: 4,
    uid: 5,
    resourceVersion: 6,
    generation: 7,
    creationTimestamp: 8,
    deletionTimestamp: 9,
    deletionGracePeriodSeconds: 10,
    labels: 11,
    annotations: 12,
    ownerReferences: 13,
    finalizers: 14,
    managedFields: 17,
  },
  OwnerReference: { kind: 1, name: 3, uid: 4, apiVersion: 5, controller: 6, blockOwnerDeletion: 7 },
  ManagedFieldsEntry: {
    manager: 1,
    operation: 2,
    apiVersion: 3,
    time: 4,
    fieldsType: 6,
    fieldsV1: 7,
    subresource: 8,
  },
  FieldsV1: { Raw: 1 },
  Time: { seconds: 1, nanos: 2 },
  /** Every list kind (`PodList`...) numbers its two fields as `List` does. */
  List: { metadata: 1, items: 2 },
  ListMeta: { resourceVersion: 2, continue: 3, shardInfo: 5 },
  ShardInfo: { selector: 1 },
  WatchEvent: { type: 1, object: 2 },
  Status: { status: 2, message: 3, reason: 4, details: 5, code: 6 },
  StatusDetails: { name: 1, group: 2, kind: 3, causes: 4, retryAfterSeconds: 5, uid: 6 },
  StatusCause: { reason: 1, message: 2, field: 3 },
} as const;

/** `k8s.io/apimachinery/pkg/api/resource`. */
export const resourceFields = {
  Quantity: { string: 1 },
} as const;

/** `k8s.io/api/core/v1`. */
export const coreV1Fields = {
  ConfigMap: { metadata: 1, data: 2 },
  Pod: { metadata: 1, spec: 2, status: 3 },
  PodSpec: {
    containers: 2,
    restartPolicy: 3,
    securityContext: 14,
    automountServiceAccountToken: 21,
    enableServiceLinks: 30,
  },
  PodSecurityContext: { runAsUser: 2, runAsNonRoot: 3, runAsGroup: 6, seccompProfile: 10 },
  SeccompProfile: { type: 1 },
  Container: {
    name: 1,
    image: 2,
    command: 3,
    resources: 8,
    securityContext: 15,
    terminationMessagePolicy: 20,
  },
  ResourceRequirements: { limits: 1, requests: 2 },
  SecurityContext: { capabilities: 1, runAsNonRoot: 5, allowPrivilegeEscalation: 7 },
  Capabilities: { drop: 2 },
  PodStatus: { phase: 1, message: 3, reason: 4, containerStatuses: 8 },
  ContainerStatus: { name: 1, state: 2 },
  ContainerState: { terminated: 3 },
  ContainerStateTerminated: {
    exitCode: 1,
    signal: 2,
    reason: 3,
    message: 4,
    startedAt: 5,
    finishedAt: 6,
    containerID: 7,
  },
} as const;
