import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideLifecycle, type ServerState } from './decide-lifecycle.ts';
import {
  decideInitialisation,
  decideNode,
  decideRefresh,
  initialisationPatch,
  type NodeMapping,
} from './decide-node.ts';
import { server } from './fake-node-api.test-support.ts';
import { PROVIDED_NODE_IP_ANNOTATION, UNINITIALIZED_TAINT } from './names.ts';
import { keepNodeFieldsRead, type Node } from './node.ts';

/** A Node as kubelet registers and reports it, with the status fields the controllers never read. */
function registered(options: { ready: 'True' | 'False' | 'Unknown'; initialised: boolean }): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'worker-1',
      uid: '0b9c3f4e-7d21-4a55-9e0b-5c1d2e3f4a5b',
      resourceVersion: '812',
      creationTimestamp: '2026-11-25T09:00:00Z',
      labels: { 'kubernetes.io/hostname': 'worker-1', 'kubernetes.io/os': 'linux' },
      annotations: { [PROVIDED_NODE_IP_ANNOTATION]: '10.0.0.2', 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: {
      ...(options.initialised ? { providerID: 'hcloud://42' } : {}),
      taints: options.initialised ? [] : [{ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' }],
    },
    status: {
      conditions: [
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory' },
        { type: 'Ready', status: options.ready, reason: 'KubeletReady' },
      ],
      addresses: [
        { type: 'InternalIP', address: '10.0.0.2' },
        { type: 'Hostname', address: 'worker-1' },
      ],
      // Never read: what the transform drops.
      capacity: { cpu: '2', memory: '3906068Ki', pods: '110' },
      allocatable: { cpu: '2', memory: '3803668Ki', pods: '110' },
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: { kubeletVersion: 'v1.34.2', containerRuntimeVersion: 'containerd://1.7.24' },
      images: [
        { names: ['registry.k8s.io/pause@sha256:ee6521f2', 'registry.k8s.io/pause:3.10'], sizeBytes: 320368 },
      ],
    } as Node['status'],
  };
}

const mapping: NodeMapping = { addressFamily: 'ipv4', networkId: undefined, zoneLabels: true };
const states: ServerState[] = [
  { state: 'exists', server: { status: 'running' } },
  { state: 'exists', server: { status: 'off' } },
  { state: 'gone' },
];

describe('keepNodeFieldsRead', () => {
  for (const ready of ['True', 'False', 'Unknown'] as const)
    for (const initialised of [false, true])
      it(`decides alike on the kept fields: Ready=${ready}, ${initialised ? 'initialised' : 'tainted'}`, () => {
        const node = registered({ ready, initialised });
        const kept = keepNodeFieldsRead(structuredClone(node));
        const now = Date.parse('2026-11-25T10:00:00Z');
        assert.deepEqual(
          decideNode(kept, { monitorPeriodMs: 5000, now }),
          decideNode(node, { monitorPeriodMs: 5000, now }),
        );
        for (const state of [undefined, ...states])
          assert.deepEqual(decideLifecycle(kept, state), decideLifecycle(node, state));
        const found = { state: 'exists', server: server(), fetchedAt: now } as const;
        assert.deepEqual(
          decideInitialisation(kept, { id: 42 }, found, mapping),
          decideInitialisation(node, { id: 42 }, found, mapping),
        );
        const step = { server: server(), providerID: 'hcloud://42', labels: { zone: 'nbg1-dc3' } };
        assert.deepEqual(initialisationPatch(kept, step), initialisationPatch(node, step));
        assert.deepEqual(decideRefresh(kept, server(), mapping), decideRefresh(node, server(), mapping));
        assert.deepEqual(kept.metadata, node.metadata);
        assert.deepEqual(kept.spec, node.spec);
      });

  it("drops the status kubelet reports that the controllers don't read", () => {
    const kept = keepNodeFieldsRead(structuredClone(registered({ ready: 'True', initialised: true })));
    assert.deepEqual(Object.keys(kept.status ?? {}), ['conditions', 'addresses']);
  });
});
