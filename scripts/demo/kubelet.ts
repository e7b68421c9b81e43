/**
 * The API-server-only control plane (the demo's fallback where no node can start) has no kubelet, so the
 * At's pod would stay Pending for ever. In that mode (only) the demo plays kubelet for exactly that pod,
 * through the pod status subresource as a kubelet does: Running, then Succeeded with the command
 * container terminated with exit code 0. On a node, and on a cluster of KUBECONFIG, a real kubelet runs
 * the pod.
 */
import type { KubeClient } from '@loopwright/runtime';
import { setTimeout as sleep } from 'node:timers/promises';
import { AT_NAME, NAMESPACE } from './names.ts';
import { ATS, PODS } from './resources.ts';
import type { At } from './rows.ts';

/** How long the stand-in lets the command "run": long enough for the table to show RUNNING. */
const RUN_MS = 1500;

function containerStatus(state: object, ready: boolean): object {
  return { name: 'command', image: 'busybox', imageID: '', ready, restartCount: 0, state };
}

async function patchPodStatus(client: KubeClient, name: string, status: object): Promise<void> {
  await client.resource(PODS).status.patch({ namespace: NAMESPACE, name }, { merge: { status } });
}

/** Waits for the At's pod, then reports it Running and Succeeded. Ends early when `signal` aborts. */
export async function playKubelet(client: KubeClient, signal: AbortSignal): Promise<void> {
  let podName: string | undefined;
  while (podName === undefined) {
    await sleep(250, undefined, { signal });
    const at = await client.resource<At>(ATS).get({ namespace: NAMESPACE, name: AT_NAME });
    const recorded = at.status?.podName;
    // The At records the pod's name before creating it (at most once): wait for the pod itself.
    if (recorded && (await client.resource(PODS).getOptional({ namespace: NAMESPACE, name: recorded })))
      podName = recorded;
  }
  const startedAt = new Date().toISOString();
  await patchPodStatus(client, podName, {
    phase: 'Running',
    containerStatuses: [containerStatus({ running: { startedAt } }, true)],
  });
  await sleep(RUN_MS, undefined, { signal });
  await patchPodStatus(client, podName, {
    phase: 'Succeeded',
    containerStatuses: [
      containerStatus(
        { terminated: { exitCode: 0, reason: 'Completed', startedAt, finishedAt: new Date().toISOString() } },
        false,
      ),
    ],
  });
}
