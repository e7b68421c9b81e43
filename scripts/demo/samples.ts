/**
 * The sample objects, one per controller: an At due in 10 s; a MailgunCluster and the Cluster naming it
 * (Cluster API's core controller makes the Cluster its owner); a Node carrying the uninitialized taint,
 * named like a server of the fake Hetzner project (the demo plays kubelet registering a cloud Node).
 * Plus their removal, for a cluster that outlives the demo.
 */
import { isNotFound, type KubeClient } from '@loopwright/runtime';
import type { FakeHcloud } from '@loopwright/testing';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { getIfExists } from './read.ts';
import {
  AT_COMMAND,
  AT_DELAY_MS,
  AT_NAME,
  CLUSTER_NAME,
  MANAGED_BY,
  NAMESPACE,
  NODE_LABEL,
  NODE_NAME,
  PATHS,
  UNINITIALIZED_TAINT,
} from './names.ts';

interface Meta {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

async function deleteIfPresent(client: KubeClient, path: string): Promise<boolean> {
  try {
    await client.requestJson('DELETE', path, { body: { propagationPolicy: 'Background' } });
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

async function waitGone(client: KubeClient, path: string, timeoutMs: number, signal?: AbortSignal) {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if (!(await getIfExists(client, path))) return true;
    await sleep(250, undefined, signal ? { signal } : {});
  }
  return false;
}

const ours = (object: Meta): boolean =>
  Object.entries(MANAGED_BY).every(([key, value]) => object.metadata.labels?.[key] === value);

/** On the namespace: which demo process created it, so that a second run never deletes a live one's. */
const RUN_ANNOTATION = 'loopwright.dev/demo-run';
const thisRun = `${hostname()}/${process.pid}`;

/** Whether the run named by the annotation is a demo still running on this machine. */
function runningElsewhere(run: string | undefined): boolean {
  const [host, pid] = run?.split('/') ?? [];
  if (host !== hostname() || !pid || run === thisRun) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('demo/main.ts');
  } catch {
    return false;
  }
}

/**
 * Clears the way: the namespace and the Node of a demo run that was killed before it cleaned up are
 * removed; a namespace or Node of that name that the demo did not create is an error (never touched).
 */
export async function clearLeftovers(
  client: KubeClient,
  signal: AbortSignal,
  say: (line: string) => void,
): Promise<void> {
  for (const [what, path] of [
    [`namespace ${NAMESPACE}`, PATHS.namespace],
    [`Node ${NODE_NAME}`, `${PATHS.nodes}/${NODE_NAME}`],
  ] as const) {
    const existing = await getIfExists<Meta>(client, path);
    if (!existing) continue;
    if (!ours(existing))
      throw new Error(`${what} exists and was not created by the demo; the demo leaves it alone and stops`);
    const run = existing.metadata.annotations?.[RUN_ANNOTATION];
    if (runningElsewhere(run))
      throw new Error(`another demo (${run}) is using ${what} right now: wait for it, or stop it`);
    say(`removing ${what}, left over from an earlier demo run`);
    await deleteIfPresent(client, path);
    if (!(await waitGone(client, path, 120_000, signal))) throw new Error(`${what} is still terminating`);
  }
}

/** The namespace, ready for pods: its `default` ServiceAccount exists (admission requires it). */
export async function createNamespace(client: KubeClient, signal: AbortSignal): Promise<void> {
  await client.requestJson('POST', '/api/v1/namespaces', {
    body: {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NAMESPACE, labels: { ...MANAGED_BY }, annotations: { [RUN_ANNOTATION]: thisRun } },
    },
  });
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    if (await getIfExists(client, `${PATHS.serviceAccounts}/default`)) return;
    await sleep(200, undefined, { signal });
  }
  throw new Error(`namespace ${NAMESPACE} has no default ServiceAccount after 30s`);
}

export interface AppliedSamples {
  /** What cloud-node must set on the Node: the fake server's id. */
  expectedProviderID: string;
}

export async function applySamples(client: KubeClient, hcloud: FakeHcloud): Promise<AppliedSamples> {
  await client.requestJson('POST', PATHS.ats, {
    body: {
      apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
      kind: 'At',
      metadata: { name: AT_NAME, labels: { ...MANAGED_BY } },
      spec: { schedule: new Date(Date.now() + AT_DELAY_MS).toISOString(), command: AT_COMMAND },
    },
  });

  await client.requestJson('POST', PATHS.mailgunClusters, {
    body: {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
      kind: 'MailgunCluster',
      metadata: { name: CLUSTER_NAME, labels: { ...MANAGED_BY } },
      spec: {
        priority: 'Urgent',
        request: 'One small cluster for the Loopwright demo, please.',
        requester: 'demo@example.com',
      },
    },
  });
  await client.requestJson('POST', PATHS.clusters, {
    body: {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: CLUSTER_NAME, labels: { ...MANAGED_BY } },
      spec: {
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'MailgunCluster',
          name: CLUSTER_NAME,
        },
      },
    },
  });

  const server = hcloud.servers.add({ name: NODE_NAME, server_type: 'cpx31', location: 'fsn1' });
  await client.requestJson('POST', PATHS.nodes, {
    body: {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE_NAME, labels: { ...MANAGED_BY, ...NODE_LABEL } },
      spec: { taints: [{ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' }] },
    },
  });
  return { expectedProviderID: `hcloud://${server.id}` };
}

/**
 * Deletes the demo's Cluster and waits until it is gone: Cluster API deletes its MailgunCluster, then
 * removes its finalizer from the Cluster, so this must happen while Cluster API still runs.
 */
export async function deleteCluster(client: KubeClient): Promise<void> {
  const path = `${PATHS.clusters}/${CLUSTER_NAME}`;
  if ((await deleteIfPresent(client, path)) && !(await waitGone(client, path, 60_000)))
    throw new Error(`Cluster ${CLUSTER_NAME} is still being deleted after 60s`);
}

/**
 * Removes what the demo created in a cluster that outlives it: the namespace (with the At, its pod, the
 * Cluster, the MailgunCluster and their Events), the Node, and the Events cloud-node wrote about the
 * Node into `default`. Waits for the namespace to be gone, so that the next run starts clean.
 */
export async function deleteSamples(client: KubeClient, say: (line: string) => void): Promise<void> {
  const namespaceDeleted = await deleteIfPresent(client, PATHS.namespace);
  const nodeDeleted = await deleteIfPresent(client, `${PATHS.nodes}/${NODE_NAME}`);
  const selector = encodeURIComponent(`involvedObject.kind=Node,involvedObject.name=${NODE_NAME}`);
  await client.requestJson('DELETE', `/api/v1/namespaces/default/events?fieldSelector=${selector}`);
  const gone = !namespaceDeleted || (await waitGone(client, PATHS.namespace, 60_000));
  const deleted = [namespaceDeleted && `namespace ${NAMESPACE}`, nodeDeleted && `Node ${NODE_NAME}`].filter(
    Boolean,
  );
  if (deleted.length > 0)
    say(`deleted ${deleted.join(' and ')}${gone ? '' : ` (namespace ${NAMESPACE} still terminating)`}`);
}
