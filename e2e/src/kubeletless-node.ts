/**
 * A Node as a kubelet started with `--cloud-provider=external` registers it, as an API object only (no
 * kubelet behind it): what cloud-node initialises in the e2e suite, the fault suite and the soak.
 */
import type { KubeObject } from '@loopwright/client';

export const UNINITIALIZED_TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';

/** What a small Hetzner server's kubelet reports (cx22: 2 vCPU, 4 GB). */
const NODE_RESOURCES = { cpu: '2', memory: '3900Mi', pods: '110' };

export interface NodeTaint {
  key: string;
  value?: string;
  effect: string;
}

/**
 * The Node `name` with `labels`, tainted uninitialized and with `noKubeletTaint`, a taint nothing
 * tolerates, so that no pod is scheduled onto a Node that has no kubelet.
 */
export function kubeletlessNode(
  name: string,
  labels: Record<string, string>,
  noKubeletTaint: NodeTaint,
): KubeObject & { spec: object; status: object } {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels },
    spec: { taints: [{ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' }, noKubeletTaint] },
    status: {
      // A kubelet registers its resources; without them the scheduler finds no room on the Node.
      capacity: NODE_RESOURCES,
      allocatable: NODE_RESOURCES,
      // ...and reports NotReady until its CNI is up (which may wait for cloud-node's addresses);
      // kube-controller-manager then keeps the not-ready taint on (it removes it from a Node without
      // a Ready condition).
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'KubeletNotReady',
          message: 'container runtime network not ready: cni plugin not initialized',
          lastHeartbeatTime: new Date().toISOString(),
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    },
  };
}
