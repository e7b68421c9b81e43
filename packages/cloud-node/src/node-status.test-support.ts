/**
 * What a kubelet reports, for the integration tests and the bench: the Node's Ready condition, written
 * as a merge patch of its status subresource.
 */
import type { KubeClient } from '@loopwright/runtime';

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
): Promise<unknown> {
  const now = new Date().toISOString();
  return kube.requestJson('PATCH', `/api/v1/nodes/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: {
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
  });
}
