/**
 * Integration-test support: tests that create pods of buildPod without creating their At give them an
 * owner that exists, a ConfigMap. kube-controller-manager's garbage collector deletes a pod whose owner
 * is gone, which would race the test.
 */
import type { Pod } from './resource.ts';

/** `pod` with its owner references turned to the ConfigMap `name` (uid `uid`), flags kept. */
export function ownedByConfigMap(pod: Pod, name: string, uid: string): Pod {
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      ownerReferences: pod.metadata?.ownerReferences?.map((reference) => ({
        ...reference,
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name,
        uid,
      })),
    },
  };
}
