/**
 * The pod cache's protobuf decoder against a real API server: the pods this controller creates, in
 * every state a kubelet reports, must be cached the same whether they were read as JSON or protobuf.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeClient, type KubeObject } from '@loopwright/client';
import { stripManagedFields } from '@loopwright/informer';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { podCacheScope } from './controller.ts';
import { buildPod } from './pod.ts';
import { decodePodFieldsRead, keepPodFieldsRead, POD_RESOURCE, type Pod } from './resource.ts';
import { ownedByConfigMap } from './pod.test-support.ts';

let client: KubeClient;
let ns: TestNamespace;

before(async () => {
  const kc = loadTestKubeConfig();
  client = new KubeClient(kc);
  ns = await createTestNamespace(kc, 'at-protobuf');
});
after(async () => {
  await ns.cleanup();
  await client.close();
});

const started = '2026-11-25T10:00:00Z';
const finished = '2026-11-25T10:00:07Z';

/** What kubelets write to `status`, one pod each: the decoder must read each the same as JSON. */
const statuses: Record<string, Record<string, unknown>> = {
  pending: {},
  running: {
    phase: 'Running',
    containerStatuses: [container({ running: { startedAt: started } })],
  },
  succeeded: {
    phase: 'Succeeded',
    containerStatuses: [
      container({
        terminated: {
          exitCode: 0,
          reason: 'Completed',
          startedAt: started,
          finishedAt: finished,
          containerID: 'containerd://0f1e2d3c',
        },
      }),
    ],
  },
  killed: {
    phase: 'Failed',
    reason: 'DeadlineExceeded',
    message: 'Pod was active on the node longer than the specified deadline',
    initContainerStatuses: [container({ terminated: { exitCode: 0, reason: 'Completed' } }, 'init')],
    containerStatuses: [
      container({
        terminated: {
          exitCode: 137,
          signal: 9,
          reason: 'OOMKilled',
          message: 'out of memory ✗',
          finishedAt: finished,
        },
      }),
    ],
    hostIP: '10.0.0.7',
    podIP: '10.244.0.9',
    qosClass: 'Burstable',
  },
  waiting: {
    phase: 'Pending',
    containerStatuses: [container({ waiting: { reason: 'ImagePullBackOff', message: 'no such image' } })],
  },
  evicted: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' },
};

function container(state: Record<string, unknown>, name = 'command'): Record<string, unknown> {
  return { name, state, ready: false, restartCount: 0, image: 'busybox:1.37.0', imageID: '' };
}

async function createPods(): Promise<void> {
  // An owner that exists (see ownedByConfigMap).
  const owner = await client
    .resource<KubeObject>({
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
    })
    .create({ metadata: { name: 'owner', namespace: ns.name } });
  const pods = client.resource<Pod>(POD_RESOURCE);
  for (const [name, status] of Object.entries(statuses)) {
    const at = {
      metadata: { name, namespace: ns.name, uid: `6d1f8a2e-0c4b-4f7e-9a51-3b2c7d9e0f1${name.length}` },
      spec: { schedule: started, command: `echo ${name}` },
    };
    const pod = ownedByConfigMap(
      buildPod(at, name, { defaultImage: 'busybox:1.37.0' }),
      'owner',
      owner.metadata?.uid ?? '',
    );
    if (name === 'killed')
      (pod.spec as Record<string, unknown>).initContainers = [{ name: 'init', image: 'busybox:1.37.0' }];
    await pods.create(pod);
    if (Object.keys(status).length === 0) continue;
    await pods.status.patch({ namespace: ns.name, name }, { merge: { status } });
  }
}

function listed(protobuf: boolean): Promise<Pod[]> {
  // The scope's list, without its transform: the tests compare what each encoding caches.
  const { namespace, labelSelector, protobuf: decode } = podCacheScope(ns.name);
  return client
    .resource<Pod>(POD_RESOURCE, decode === undefined ? {} : { protobuf: { decode } })
    .list({
      ...(namespace === undefined ? {} : { namespace }),
      ...(labelSelector === undefined ? {} : { labelSelector }),
      encoding: protobuf ? 'protobuf' : 'json',
    })
    .then(({ items }) => items);
}

function byName(pods: Pod[]): Map<string, Pod> {
  return new Map(pods.map((pod) => [pod.metadata?.name ?? '', pod]));
}

describe("the pod cache's protobuf decoder against a real API server", () => {
  before(createPods);

  it('caches every pod as the JSON one would be cached', async () => {
    const json = await listed(false);
    const protobuf = byName(await listed(true));
    assert.deepStrictEqual([...protobuf.keys()].sort(), Object.keys(statuses).sort());
    const cached = (pod: Pod) => keepPodFieldsRead(stripManagedFields(pod as KubeObject) as Pod);
    for (const pod of json) {
      const decoded = protobuf.get(pod.metadata?.name ?? '');
      assert.ok(decoded);
      assert.deepStrictEqual(cached(decoded), cached(pod), pod.metadata?.name);
    }
  });

  it('reads metadata and the kept status fields exactly, and nothing of the spec', async () => {
    const json = byName(await listed(false));
    for (const [name, decoded] of byName(await listed(true))) {
      const pod = json.get(name);
      assert.ok(pod);
      assert.deepStrictEqual(decoded.metadata, pod.metadata, name);
      assert.equal(decoded.spec, undefined);
      const { phase, reason, message, containerStatuses } = pod.status ?? {};
      const kept = {
        ...(phase === undefined ? {} : { phase }),
        ...(reason === undefined ? {} : { reason }),
        ...(message === undefined ? {} : { message }),
        ...(containerStatuses === undefined
          ? {}
          : {
              containerStatuses: containerStatuses.map(({ name: container, state }) => ({
                name: container,
                state: state?.terminated === undefined ? {} : { terminated: state.terminated },
              })),
            }),
      };
      assert.deepStrictEqual(decoded.status, kept, name);
    }
    // The comparison covers what it claims to: a terminated container with every field, and a signal.
    const killed = json.get('killed')?.status?.containerStatuses?.[0]?.state?.terminated;
    assert.deepStrictEqual(Object.keys(killed ?? {}).sort(), [
      'exitCode',
      'finishedAt',
      'message',
      'reason',
      'signal',
      'startedAt',
    ]);
    assert.equal((killed as { startedAt?: unknown }).startedAt, null);
  });

  it('is what the pod cache scope reads with', () => {
    assert.equal(podCacheScope(ns.name).protobuf, decodePodFieldsRead);
    assert.equal(podCacheScope(undefined).protobuf, decodePodFieldsRead);
  });
});
