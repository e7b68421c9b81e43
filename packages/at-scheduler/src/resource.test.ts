import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { observePod } from './decide.ts';
import { buildPod } from './pod.ts';
import { AT_OUTCOME_FINALIZER, decodePodFieldsRead, keepPodFieldsRead, type Pod } from './resource.ts';

const atUid = '6d1f8a2e-0c4b-4f7e-9a51-3b2c7d9e0f11';

/** A pod as the API server returns it: buildPod()'s spec, defaulted, plus what the kubelet reports. */
function served(status: Pod['status'], metadata: Partial<NonNullable<Pod['metadata']>> = {}): Pod {
  const pod = buildPod(
    {
      metadata: { name: 'hello', namespace: 'ns', uid: atUid },
      spec: { schedule: '2026-11-25T10:00:00Z', command: 'echo hi' },
    },
    'hello-6d1f8a2e',
    { defaultImage: 'busybox:1.37.0' },
  );
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      uid: 'c2a4e6f8-1b3d-4c5e-8f70-92a4b6c8d0e2',
      resourceVersion: '4711',
      creationTimestamp: '2026-11-25T10:00:00Z',
      ...metadata,
    },
    spec: { ...pod.spec, nodeName: 'node-1', serviceAccountName: 'default', tolerations: [] },
    status,
  };
}

const running = served({
  phase: 'Running',
  containerStatuses: [{ name: 'command', state: {} }],
});
const succeeded = served({
  phase: 'Succeeded',
  containerStatuses: [
    {
      name: 'command',
      state: { terminated: { exitCode: 0, reason: 'Completed', message: 'hi' } },
    },
  ],
});
const failed = served({
  phase: 'Failed',
  containerStatuses: [
    { name: 'sidecar', state: { terminated: { exitCode: 0, reason: 'Completed' } } },
    { name: 'command', state: { terminated: { exitCode: 2, reason: 'Error', message: 'no such file' } } },
  ],
});
const evicted = served({
  phase: 'Failed',
  reason: 'Evicted',
  message: 'The node was low on resource: memory.',
});
const deleting = served({ phase: 'Pending' }, { deletionTimestamp: '2026-11-25T10:00:05Z' });
const unreported = served(undefined);

describe('keepPodFieldsRead', () => {
  const pods = { running, succeeded, failed, evicted, deleting, unreported };

  for (const [state, pod] of Object.entries(pods)) {
    it(`keeps everything the controller reads of a pod: ${state}`, () => {
      const kept = keepPodFieldsRead(structuredClone(pod));
      assert.deepEqual(observePod(kept, atUid, false), observePod(pod, atUid, false));
      assert.deepEqual(observePod(kept, 'another-at', false), observePod(pod, 'another-at', false));
      assert.deepEqual(kept.metadata, pod.metadata, 'metadata is kept whole: owner references, labels, uid');
    });
  }

  it('drops the spec and the status fields the controller does not read', () => {
    const kept = keepPodFieldsRead(
      structuredClone(
        served({
          ...failed.status,
          qosClass: 'BestEffort',
          hostIP: '10.0.0.1',
          containerStatuses: [
            {
              name: 'command',
              image: 'busybox:1.36',
              restartCount: 0,
              state: { terminated: { exitCode: 2, reason: 'Error' } },
              lastState: {},
            },
          ],
        } as unknown as Pod['status']),
      ),
    );
    assert.equal(kept.spec, undefined);
    assert.deepEqual(Object.keys(kept.status ?? {}).sort(), [
      'containerStatuses',
      'message',
      'phase',
      'reason',
    ]);
    assert.deepEqual(kept.status?.containerStatuses, [
      { name: 'command', state: { terminated: { exitCode: 2, reason: 'Error' } } },
    ]);
  });
});

describe('decodePodFieldsRead', () => {
  const LD = WireType.LengthDelimited;
  const Varint = WireType.Varint;
  const seconds = (iso: string): number => Date.parse(iso) / 1000;
  const containerID = (n: number) => `containerd://${String(n).repeat(64)}`;

  function time(writer: BinaryWriter, field: number, iso: string | undefined): void {
    writer.tag(field, LD).fork();
    if (iso !== undefined) writer.tag(1, Varint).int64(seconds(iso)).tag(2, Varint).int32(250_000_000);
    writer.join();
  }

  /** A `ContainerStatus`, with fields the decoder skips around its state. */
  function containerStatus(writer: BinaryWriter, name: string, state: (writer: BinaryWriter) => void): void {
    writer.tag(8, LD).fork();
    writer.tag(1, LD).string(name);
    writer.tag(2, LD).fork();
    state(writer);
    writer.join();
    // lastState (a terminated one, which must not be taken for the state), ready, restartCount, image.
    writer.tag(3, LD).fork().tag(3, LD).fork().tag(1, Varint).int32(99).join().join();
    writer.tag(4, Varint).bool(false);
    writer.tag(5, Varint).int32(0);
    writer.tag(6, LD).string('busybox:1.37.0');
    writer.tag(8, LD).string(containerID(9));
    writer.join();
  }

  /** `ContainerStateTerminated`: 1 exitCode, 2 signal, 3 reason, 4 message, 5/6 times, 7 containerID. */
  const terminated =
    (fields: {
      exitCode: number;
      signal: number;
      reason: string;
      message: string;
      startedAt?: string;
      finishedAt?: string;
      containerID: string;
    }) =>
    (writer: BinaryWriter): void => {
      writer.tag(3, LD).fork();
      writer.tag(1, Varint).int32(fields.exitCode);
      writer.tag(2, Varint).int32(fields.signal);
      writer.tag(3, LD).string(fields.reason);
      writer.tag(4, LD).string(fields.message);
      time(writer, 5, fields.startedAt);
      time(writer, 6, fields.finishedAt);
      writer.tag(7, LD).string(fields.containerID);
      writer.join();
    };

  /** The pod's `ObjectMeta`, written from its JSON. */
  function writeMetadata(writer: BinaryWriter, metadata: NonNullable<Pod['metadata']>): void {
    writer.tag(1, LD).fork();
    writer.tag(1, LD).string(metadata.name ?? '');
    writer.tag(3, LD).string(metadata.namespace ?? '');
    writer.tag(5, LD).string(metadata.uid ?? '');
    writer.tag(6, LD).string(metadata.resourceVersion ?? '');
    writer.tag(7, Varint).int64(0);
    time(writer, 8, metadata.creationTimestamp);
    for (const [key, value] of Object.entries(metadata.labels ?? {}))
      writer.tag(11, LD).fork().tag(1, LD).string(key).tag(2, LD).string(value).join();
    for (const owner of metadata.ownerReferences ?? []) {
      writer.tag(13, LD).fork();
      writer.tag(1, LD).string(owner.kind).tag(3, LD).string(owner.name).tag(4, LD).string(owner.uid);
      writer.tag(5, LD).string(owner.apiVersion);
      writer.tag(6, Varint).bool(owner.controller ?? false);
      writer.tag(7, Varint).bool(owner.blockOwnerDeletion ?? false);
      writer.join();
    }
    for (const finalizer of metadata.finalizers ?? []) writer.tag(14, LD).string(finalizer);
    writer.join();
  }

  /** A failed pod as the API server's protobuf has it, and as its JSON has it. */
  function failedPod(): { bytes: Uint8Array; json: Pod } {
    const json = served({
      phase: 'Failed',
      reason: 'DeadlineExceeded',
      message: 'Pod was active on the node longer than the specified deadline',
      hostIP: '10.0.0.1',
      podIP: '10.244.0.7',
      startTime: '2026-11-25T10:00:01Z',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [
        {
          name: 'sidecar',
          state: {
            terminated: {
              exitCode: 0,
              reason: 'Completed',
              startedAt: '2026-11-25T10:00:02Z',
              finishedAt: '2026-11-25T10:00:03Z',
              containerID: containerID(1),
            },
          },
          lastState: { terminated: { exitCode: 99 } },
          ready: false,
          restartCount: 0,
          image: 'busybox:1.37.0',
        },
        {
          name: 'command',
          state: {
            terminated: {
              exitCode: 137,
              signal: 9,
              reason: 'Error',
              message: 'killed',
              startedAt: null,
              finishedAt: null,
              containerID: containerID(2),
            },
          },
          ready: false,
          restartCount: 0,
          image: 'busybox:1.37.0',
        },
        {
          name: 'running',
          state: { running: { startedAt: '2026-11-25T10:00:02Z' } },
          ready: false,
          restartCount: 0,
          image: 'busybox:1.37.0',
        },
        {
          name: 'waiting',
          state: { waiting: { reason: 'ContainerCreating' } },
          ready: false,
          restartCount: 0,
          image: 'busybox:1.37.0',
        },
      ],
    } as unknown as Pod['status']);

    const writer = new BinaryWriter();
    assert.ok(json.metadata !== undefined);
    writeMetadata(writer, json.metadata);
    // The spec: skipped (containers with a name and image, restartPolicy, nodeName).
    writer.tag(2, LD).fork();
    writer.tag(2, LD).fork().tag(1, LD).string('command').tag(2, LD).string('busybox:1.37.0').join();
    writer.tag(3, LD).string('Never');
    writer.tag(10, LD).string('node-1');
    writer.join();
    writer.tag(3, LD).fork();
    writer.tag(1, LD).string('Failed');
    writer.tag(2, LD).fork().tag(1, LD).string('Ready').tag(2, LD).string('False').join();
    writer.tag(3, LD).string('Pod was active on the node longer than the specified deadline');
    writer.tag(4, LD).string('DeadlineExceeded');
    writer.tag(5, LD).string('10.0.0.1');
    writer.tag(6, LD).string('10.244.0.7');
    time(writer, 7, '2026-11-25T10:00:01Z');
    containerStatus(
      writer,
      'sidecar',
      terminated({
        exitCode: 0,
        signal: 0,
        reason: 'Completed',
        message: '',
        startedAt: '2026-11-25T10:00:02Z',
        finishedAt: '2026-11-25T10:00:03Z',
        containerID: containerID(1),
      }),
    );
    containerStatus(
      writer,
      'command',
      terminated({
        exitCode: 137,
        signal: 9,
        reason: 'Error',
        message: 'killed',
        containerID: containerID(2),
      }),
    );
    containerStatus(writer, 'running', (state) => {
      state.tag(2, LD).fork();
      time(state, 1, '2026-11-25T10:00:02Z');
      state.join();
    });
    containerStatus(writer, 'waiting', (state) => {
      state.tag(1, LD).fork().tag(1, LD).string('ContainerCreating').join();
    });
    writer.tag(11, LD).string('BestEffort');
    writer.join();
    return { bytes: writer.finish(), json };
  }

  it('reads the metadata and of the status what the controller reads, as the JSON gives them', () => {
    const { bytes, json } = failedPod();
    const pod = decodePodFieldsRead(bytes);
    assert.deepStrictEqual(pod, {
      metadata: {
        name: 'hello-6d1f8a2e',
        namespace: 'ns',
        uid: 'c2a4e6f8-1b3d-4c5e-8f70-92a4b6c8d0e2',
        resourceVersion: '4711',
        creationTimestamp: '2026-11-25T10:00:00Z',
        labels: json.metadata?.labels,
        ownerReferences: [
          {
            apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
            kind: 'At',
            name: 'hello',
            uid: atUid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        finalizers: [AT_OUTCOME_FINALIZER],
      },
      status: {
        phase: 'Failed',
        message: 'Pod was active on the node longer than the specified deadline',
        reason: 'DeadlineExceeded',
        containerStatuses: [
          {
            name: 'sidecar',
            state: {
              terminated: {
                exitCode: 0,
                reason: 'Completed',
                startedAt: '2026-11-25T10:00:02Z',
                finishedAt: '2026-11-25T10:00:03Z',
                containerID: containerID(1),
              },
            },
          },
          {
            name: 'command',
            state: {
              terminated: {
                exitCode: 137,
                signal: 9,
                reason: 'Error',
                message: 'killed',
                startedAt: null,
                finishedAt: null,
                containerID: containerID(2),
              },
            },
          },
          { name: 'running', state: {} },
          { name: 'waiting', state: {} },
        ],
      },
    });
    assert.equal(Object.keys(json.metadata?.labels ?? {}).length, 3);
    assert.ok(!('spec' in pod), 'the spec is skipped');
    assert.ok(!('hostIP' in pod.status), 'status fields the controller does not read are skipped');
  });

  it('gives what keepPodFieldsRead keeps of the JSON pod', () => {
    const { bytes, json } = failedPod();
    // As the informer's protobuf list and watch do: the type comes from the envelope.
    const decoded: Pod = { ...decodePodFieldsRead(bytes), apiVersion: 'v1', kind: 'Pod' };
    assert.deepStrictEqual(keepPodFieldsRead(decoded), keepPodFieldsRead(structuredClone(json)));
    assert.deepEqual(observePod(decoded, atUid, false), observePod(json, atUid, false));
  });

  it('reads a pod without status as one without status, and skips fields of other wire types', () => {
    const writer = new BinaryWriter();
    writer.tag(1, LD).fork().tag(1, LD).string('bare').join();
    writer.tag(9, Varint).int32(1);
    assert.deepStrictEqual(decodePodFieldsRead(writer.finish()), { metadata: { name: 'bare' } });
    const empty = new BinaryWriter().tag(3, LD).fork().join().finish();
    assert.deepStrictEqual(decodePodFieldsRead(empty), { status: {} });
  });
});
