import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_RESOURCES, RUN_AS_USER, buildPod } from './pod.ts';

const at = {
  apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
  kind: 'At',
  metadata: { name: 'example-at', namespace: 'ns', uid: 'uid-1' },
  spec: { schedule: '2019-04-12T10:12:00Z', command: `echo "a  b" | tr a A && echo 'it''s'` },
};

describe('buildPod', () => {
  it('runs the command verbatim through /bin/sh -c, once (restartPolicy Never), with the default image', () => {
    const pod = buildPod(at, 'example-at-pod', { defaultImage: 'busybox:1.37.0' });
    const spec = pod.spec as {
      restartPolicy: string;
      containers: [{ command: string[]; image: string; resources: unknown }];
    };
    assert.deepEqual(spec.containers[0].command, ['/bin/sh', '-c', at.spec.command]);
    assert.equal(spec.restartPolicy, 'Never');
    assert.equal(spec.containers[0].image, 'busybox:1.37.0');
    assert.deepEqual(spec.containers[0].resources, DEFAULT_RESOURCES);
    const custom = buildPod(
      { ...at, spec: { ...at.spec, image: 'alpine:3.20', resources: { limits: { cpu: 1 } } } },
      'p',
      { defaultImage: 'x' },
    );
    const customSpec = custom.spec as typeof spec;
    assert.equal(customSpec.containers[0].image, 'alpine:3.20');
    assert.deepEqual(customSpec.containers[0].resources, { limits: { cpu: 1 } });
  });

  it('is controlled by the At (GC deletes it with the At) and labelled for the pod informer', () => {
    const metadata = buildPod(at, 'example-at-pod', { defaultImage: 'busybox:1.37.0' }).metadata as {
      ownerReferences: unknown;
      labels: Record<string, string>;
    };
    assert.deepEqual(metadata.ownerReferences, [
      {
        apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
        kind: 'At',
        name: 'example-at',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(metadata.labels['app.kubernetes.io/managed-by'], 'at-scheduler');
    assert.equal(metadata.labels['cnat.programming-kubernetes.info/at-uid'], 'uid-1');
  });

  it('meets the restricted Pod Security profile and mounts no token', () => {
    const spec = buildPod(at, 'p', { defaultImage: 'x' }).spec as Record<string, unknown> & {
      securityContext: Record<string, unknown>;
      containers: [{ securityContext: Record<string, unknown> }];
    };
    assert.equal(spec.automountServiceAccountToken, false);
    assert.deepEqual(spec.securityContext, {
      runAsNonRoot: true,
      runAsUser: RUN_AS_USER,
      runAsGroup: RUN_AS_USER,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(spec.containers[0].securityContext, {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      runAsNonRoot: true,
    });
  });
});
