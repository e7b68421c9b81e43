import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { unwrapObject } from '@loopwright/client';
import { KubeClient } from '@loopwright/runtime';
import { kubeAtApi } from './api.ts';
import { buildPod } from './pod.ts';
import { encodePod } from './pod-protobuf.ts';

const at = {
  metadata: { name: 'backup', namespace: 'jobs', uid: '0b0e6d5c-4a3f-4e2d-9c1b-8a7f6e5d4c3b' },
  spec: { schedule: '2026-11-25T10:00:00Z', command: 'tar czf /tmp/x.tgz /etc' },
};

describe('encodePod', () => {
  it('encodes every field of every pod buildPod builds (the real API server checks their numbers)', () => {
    const pods = [
      buildPod(at, 'backup-1', { defaultImage: 'busybox:1.37.0' }),
      buildPod(
        {
          ...at,
          spec: {
            ...at.spec,
            image: 'alpine:3',
            resources: { requests: { cpu: 0.25 }, limits: { memory: '1Gi', 'example.com/dongle': 1 } },
          },
        },
        'backup-2',
        { defaultImage: 'busybox:1.37.0' },
      ),
    ];
    for (const pod of pods) {
      const object = unwrapObject(encodePod(pod));
      assert.equal(object.apiVersion, 'v1');
      assert.equal(object.kind, 'Pod');
      assert.ok(Buffer.from(object.raw).includes(pod.metadata?.name ?? '-'));
    }
  });

  it('refuses a pod with a field it does not write, rather than creating a pod without it', () => {
    const pod = buildPod(at, 'backup-1', { defaultImage: 'busybox:1.37.0' });
    (pod.spec as Record<string, unknown>).nodeName = 'node-1';
    assert.throws(() => encodePod(pod), {
      name: 'TypeError',
      message: 'Pod.spec.nodeName: not a field this protobuf encoding writes',
    });
  });

  it("makes kubeAtApi's createPod reject, sending nothing, as any failed create does", async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const client = new KubeClient(kc);
    const pod = buildPod(at, 'backup-1', { defaultImage: 'busybox:1.37.0' });
    (pod.spec as Record<string, unknown>).nodeName = 'node-1';
    const created = kubeAtApi(client).createPod(pod);
    await assert.rejects(created, { name: 'TypeError', message: /Pod\.spec\.nodeName/ });
    assert.equal(client.stats().requests, 0);
  });
});
