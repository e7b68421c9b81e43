/**
 * The sample objects, one per controller: an At due in 10 s; a MailgunCluster and the Cluster naming it
 * (Cluster API's core controller makes the Cluster its owner); a Node carrying the uninitialized taint,
 * named like a server of the fake Hetzner project (the demo plays kubelet registering a cloud Node).
 * Plus their removal, for a cluster that outlives the demo.
 */
import type { KubeClient, KubeObject, ObjectKey, Resource } from '@loopwright/runtime';
import type { FakeHcloud } from '@loopwright/fakes/hcloud';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AT_COMMAND,
  AT_DELAY_MS,
  AT_NAME,
  CLUSTER_NAME,
  MANAGED_BY,
  NAMESPACE,
  NODE_LABEL,
  NODE_NAME,
  UNINITIALIZED_TAINT,
} from './names.ts';
import { ATS, CLUSTERS, EVENTS, MAILGUN_CLUSTERS, NAMESPACES, NODES, SERVICE_ACCOUNTS } from './resources.ts';

/** A sample as the demo writes it: whatever its kind's spec holds. */
interface Manifest extends KubeObject {
  spec: object;
}

/** Resolves false when there was nothing to delete. */
function deleteInBackground(resource: Resource<KubeObject>, key: ObjectKey): Promise<boolean> {
  return resource.delete(key, { propagationPolicy: 'Background' });
}

async function waitGone(
  resource: Resource<KubeObject>,
  key: ObjectKey,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if (!(await resource.getOptional(key))) return true;
    await sleep(250, undefined, signal ? { signal } : {});
  }
  return false;
}

const ours = (object: KubeObject): boolean =>
  Object.entries(MANAGED_BY).every(([key, value]) => object.metadata?.labels?.[key] === value);

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
  for (const [what, resource, key] of [
    [`namespace ${NAMESPACE}`, client.resource(NAMESPACES), { name: NAMESPACE }],
    [`Node ${NODE_NAME}`, client.resource(NODES), { name: NODE_NAME }],
  ] as const) {
    const existing = await resource.getOptional(key);
    if (!existing) continue;
    if (!ours(existing))
      throw new Error(`${what} exists and was not created by the demo; the demo leaves it alone and stops`);
    const run = existing.metadata?.annotations?.[RUN_ANNOTATION];
    if (runningElsewhere(run))
      throw new Error(`another demo (${run}) is using ${what} right now: wait for it, or stop it`);
    say(`removing ${what}, left over from an earlier demo run`);
    await deleteInBackground(resource, key);
    if (!(await waitGone(resource, key, 120_000, signal))) throw new Error(`${what} is still terminating`);
  }
}

/** The namespace, ready for pods: its `default` ServiceAccount exists (admission requires it). */
export async function createNamespace(client: KubeClient, signal: AbortSignal): Promise<void> {
  await client.resource(NAMESPACES).create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NAMESPACE, labels: { ...MANAGED_BY }, annotations: { [RUN_ANNOTATION]: thisRun } },
  });
  const serviceAccounts = client.resource(SERVICE_ACCOUNTS);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    if (await serviceAccounts.getOptional({ namespace: NAMESPACE, name: 'default' })) return;
    await sleep(200, undefined, { signal });
  }
  throw new Error(`namespace ${NAMESPACE} has no default ServiceAccount after 30s`);
}

export interface AppliedSamples {
  /** What cloud-node must set on the Node: the fake server's id. */
  expectedProviderID: string;
}

export async function applySamples(client: KubeClient, hcloud: FakeHcloud): Promise<AppliedSamples> {
  await client.resource<Manifest>(ATS).create({
    apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
    kind: 'At',
    metadata: { namespace: NAMESPACE, name: AT_NAME, labels: { ...MANAGED_BY } },
    spec: { schedule: new Date(Date.now() + AT_DELAY_MS).toISOString(), command: AT_COMMAND },
  });

  await client.resource<Manifest>(MAILGUN_CLUSTERS).create({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
    kind: 'MailgunCluster',
    metadata: { namespace: NAMESPACE, name: CLUSTER_NAME, labels: { ...MANAGED_BY } },
    spec: {
      priority: 'Urgent',
      request: 'One small cluster for the Loopwright demo, please.',
      requester: 'demo@example.com',
    },
  });
  await client.resource<Manifest>(CLUSTERS).create({
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { namespace: NAMESPACE, name: CLUSTER_NAME, labels: { ...MANAGED_BY } },
    spec: {
      infrastructureRef: {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'MailgunCluster',
        name: CLUSTER_NAME,
      },
    },
  });

  const server = hcloud.servers.add({ name: NODE_NAME, server_type: 'cpx31', location: 'fsn1' });
  await client.resource<Manifest>(NODES).create({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE_NAME, labels: { ...MANAGED_BY, ...NODE_LABEL } },
    spec: { taints: [{ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' }] },
  });
  return { expectedProviderID: `hcloud://${server.id}` };
}

/**
 * Deletes the demo's Cluster and waits until it is gone: Cluster API deletes its MailgunCluster, then
 * removes its finalizer from the Cluster, so this must happen while Cluster API still runs.
 */
export async function deleteCluster(client: KubeClient): Promise<void> {
  const clusters = client.resource(CLUSTERS);
  const key = { namespace: NAMESPACE, name: CLUSTER_NAME };
  if ((await deleteInBackground(clusters, key)) && !(await waitGone(clusters, key, 60_000)))
    throw new Error(`Cluster ${CLUSTER_NAME} is still being deleted after 60s`);
}

/**
 * Removes what the demo created in a cluster that outlives it: the namespace (with the At, its pod, the
 * Cluster, the MailgunCluster and their Events), the Node, and the Events cloud-node wrote about the
 * Node into `default`. Waits for the namespace to be gone, so that the next run starts clean.
 */
export async function deleteSamples(client: KubeClient, say: (line: string) => void): Promise<void> {
  const namespaces = client.resource(NAMESPACES);
  const namespace = { name: NAMESPACE };
  const namespaceDeleted = await deleteInBackground(namespaces, namespace);
  const nodeDeleted = await deleteInBackground(client.resource(NODES), { name: NODE_NAME });
  await client.resource(EVENTS).deleteCollection({
    namespace: 'default',
    fieldSelector: `involvedObject.kind=Node,involvedObject.name=${NODE_NAME}`,
  });
  const gone = !namespaceDeleted || (await waitGone(namespaces, namespace, 60_000));
  const deleted = [namespaceDeleted && `namespace ${NAMESPACE}`, nodeDeleted && `Node ${NODE_NAME}`].filter(
    Boolean,
  );
  if (deleted.length > 0)
    say(`deleted ${deleted.join(' and ')}${gone ? '' : ` (namespace ${NAMESPACE} still terminating)`}`);
}
