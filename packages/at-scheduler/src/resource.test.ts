import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { observePod } from './decide.ts';
import { buildPod } from './pod.ts';
import { keepPodFieldsRead, type Pod } from './resource.ts';

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
