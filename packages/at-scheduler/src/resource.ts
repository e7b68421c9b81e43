/** The At resource's coordinates and the Pod fields the controller reads (the cache holds plain JSON). */
import {
  appended,
  BinaryReader,
  coreV1Fields,
  readFields,
  readMessage,
  readObjectMeta,
  readStringField,
  readTime,
  WireType,
  type KubeObject,
  type ObjectMeta,
  type ResourceType,
  type StringFields,
} from '@loopwright/client';

export const AT_GROUP = 'cnat.programming-kubernetes.info';
export const AT_VERSION = 'v1alpha1';
export const AT_API_VERSION = `${AT_GROUP}/${AT_VERSION}`;
export const AT_KIND = 'At';
export const AT_PLURAL = 'ats';

/** The At resource, for `client.resource()`. */
export const AT_RESOURCE: ResourceType = {
  group: AT_GROUP,
  version: AT_VERSION,
  plural: AT_PLURAL,
  kind: AT_KIND,
  namespaced: true,
};

/** The Pod resource, for `client.resource()`. */
export const POD_RESOURCE: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'pods',
  kind: 'Pod',
  namespaced: true,
};

/** Label on every pod this controller creates: the pod informer watches only these. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'at-scheduler';
/** The owning At's name (hashed when longer than a label value may be) and uid. */
export const AT_NAME_LABEL = `${AT_GROUP}/at-name`;
export const AT_UID_LABEL = `${AT_GROUP}/at-uid`;

export const POD_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

/**
 * The finalizer on every pod this controller creates (as the Job controller's
 * `batch.kubernetes.io/job-tracking`): it holds a deleted or evicted pod until the At's outcome is
 * recorded from it, so a claimed pod that does not exist was never created.
 */
export const AT_OUTCOME_FINALIZER = `${AT_GROUP}/at-outcome`;

/** A Pod as far as the controller reads it. */
export interface Pod extends KubeObject {
  metadata?: ObjectMeta & { deletionTimestamp?: string; creationTimestamp?: string };
  spec?: Record<string, unknown>;
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    containerStatuses?: {
      name: string;
      state?: { terminated?: { exitCode: number; reason?: string; message?: string } };
    }[];
  };
}

/**
 * The pod cache's transform: keeps what the controller reads of its pods (`metadata`, and of `status`
 * the phase, reason, message and each container's name and `state.terminated`) and drops the rest,
 * the spec above all. Thousands of pods sit in the cache: each costs a third of the heap it would
 * (790 against 2,046 B of heap for a pod of `buildPod()` as the API server serves it, managedFields
 * stripped in both; `bench/pod-cache.bench.ts`). Anything else must read a pod through a GET. A new object, so that every cached pod has the
 * same shape.
 */
export function keepPodFieldsRead(pod: Pod): Pod {
  const status = pod.status;
  return {
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: pod.metadata,
    status: {
      phase: status?.phase,
      reason: status?.reason,
      message: status?.message,
      containerStatuses: status?.containerStatuses?.map(({ name, state }) => ({
        name,
        state: { terminated: state?.terminated },
      })),
    },
  };
}

const {
  Pod: PodFields,
  PodStatus: PodStatusFields,
  ContainerStatus: ContainerStatusFields,
  ContainerState,
  ContainerStateTerminated,
} = coreV1Fields;

type PodStatus = NonNullable<Pod['status']>;
type ContainerStatus = NonNullable<PodStatus['containerStatuses']>[number];
type Terminated = NonNullable<NonNullable<ContainerStatus['state']>['terminated']>;

/**
 * The pod cache's protobuf decoder: reads of a `Pod` message what {@link keepPodFieldsRead} keeps
 * (`metadata`; of `status` the phase, reason, message and each container's name and
 * `state.terminated`), as the API server's JSON of the pod gives them, and skips the rest. Fields are
 * numbered by the client's `coreV1Fields` (k8s.io/api's `core/v1/generated.proto`).
 */
export function decodePodFieldsRead(message: Uint8Array): Pod {
  const reader = new BinaryReader(message);
  const pod: Pod = {};
  readFields(reader, reader.len, (field, wireType) => {
    if (wireType !== WireType.LengthDelimited) return false;
    // The informer's ObjectMeta also admits client-node's Date; a decoded time is a string.
    if (field === PodFields.metadata) pod.metadata = readObjectMeta(reader) as Pod['metadata'];
    else if (field === PodFields.status)
      pod.status = readMessage(reader, (end) => readPodStatus(reader, end));
    else return false;
    return true;
  });
  return pod;
}

/** `core/v1.PodStatus`'s string fields the cache keeps, by number. */
const POD_STATUS_STRINGS: StringFields<PodStatus> = {
  [PodStatusFields.phase]: 'phase',
  [PodStatusFields.message]: 'message',
  [PodStatusFields.reason]: 'reason',
};

function readPodStatus(reader: BinaryReader, end: number): PodStatus {
  const status: PodStatus = {};
  readFields(reader, end, (field, wireType) => {
    if (wireType !== WireType.LengthDelimited) return false;
    if (readStringField(reader, status, POD_STATUS_STRINGS, field)) return true;
    if (field === PodStatusFields.containerStatuses) {
      const container = readMessage(reader, (e) => readContainerStatus(reader, e));
      status.containerStatuses = appended(status.containerStatuses, container);
    } else return false;
    return true;
  });
  return status;
}

/** `name` is always in the JSON (no `omitempty`), and so is `state`, a struct. */
function readContainerStatus(reader: BinaryReader, end: number): ContainerStatus {
  const container: ContainerStatus = { name: '', state: {} };
  readFields(reader, end, (field, wireType) => {
    if (wireType !== WireType.LengthDelimited) return false;
    if (field === ContainerStatusFields.name) container.name = reader.string();
    else if (field === ContainerStatusFields.state) {
      readMessage(reader, (stateEnd) => {
        readFields(reader, stateEnd, (stateField, stateWire) => {
          if (stateField !== ContainerState.terminated || stateWire !== WireType.LengthDelimited)
            return false;
          container.state = { terminated: readMessage(reader, (e) => readTerminated(reader, e)) };
          return true;
        });
      });
    } else return false;
    return true;
  });
  return container;
}

/** `core/v1.ContainerStateTerminated`'s string fields by number. */
const TERMINATED_STRINGS: StringFields<Terminated & Record<string, unknown>> = {
  [ContainerStateTerminated.reason]: 'reason',
  [ContainerStateTerminated.message]: 'message',
  [ContainerStateTerminated.containerID]: 'containerID',
};

/** `exitCode` is always in the JSON, and so are both times (null when unset); the rest when set. */
function readTerminated(reader: BinaryReader, end: number): Terminated {
  const terminated: Terminated & Record<string, unknown> = { exitCode: 0 };
  readFields(reader, end, (field, wireType) => {
    if (wireType === WireType.Varint) {
      if (field === ContainerStateTerminated.exitCode) terminated.exitCode = reader.int32();
      else if (field === ContainerStateTerminated.signal) {
        const signal = reader.int32();
        if (signal !== 0) terminated.signal = signal;
      } else return false;
      return true;
    }
    if (wireType !== WireType.LengthDelimited) return false;
    if (readStringField(reader, terminated, TERMINATED_STRINGS, field)) return true;
    if (field === ContainerStateTerminated.startedAt) terminated.startedAt = readTime(reader);
    else if (field === ContainerStateTerminated.finishedAt) terminated.finishedAt = readTime(reader);
    else return false;
    return true;
  });
  return terminated;
}
