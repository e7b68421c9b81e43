/**
 * What a kubelet reports, for the integration tests and the bench: the Node's Ready condition, written
 * as a merge patch of its status subresource.
 */
import type { KubeClient } from '@loopwright/runtime';
import { NODES, type Node } from './node.ts';

export interface ReadyReport {
  /** The condition's reason, e.g. `KubeletReady`. */
  reason: string;
  /** `lastHeartbeatTime`; default now. */
  heartbeat?: string;
  /** `lastTransitionTime`; default now. */
  transition?: string;
}

export function reportReady(
  kube: KubeClient,
  name: string,
  status: 'True' | 'False' | 'Unknown',
  report: ReadyReport,
): Promise<Node> {
  const now = new Date().toISOString();
  return kube.resource<Node>(NODES).status.patch(
    { name },
    {
      merge: {
        status: {
          conditions: [
            {
              type: 'Ready',
              status,
              reason: report.reason,
              lastHeartbeatTime: report.heartbeat ?? now,
              lastTransitionTime: report.transition ?? now,
            },
          ],
        },
      },
    },
  );
}
