/**
 * `pnpm demo`: every controller at work, in one command.
 *
 * Where (see environment.ts): without KUBECONFIG on a real single-node cluster it starts on this machine,
 * the controllers as pods from their charts and the At's command run by the kubelet; when no node can
 * start here, on the API-server-only control plane, the controllers as child processes and the demo
 * playing kubelet for the At's pod (it says why in one line); with KUBECONFIG on that cluster, the
 * controllers as child processes (as pods from the charts when it is the node of `pnpm cluster up`).
 *
 * Then: the fake Hetzner Cloud API and the Mailgun peer, the CRDs, Cluster API (the cluster's own, else
 * its real core manager on this machine: cluster-api.ts), the controllers, one sample object per
 * controller (any controller beyond the three: its packages/<name>/samples/*.yaml), and a live table
 * until all converged (exit 0) or 90 s passed (exit 1, naming what did not converge). Ctrl-C stops
 * everything at any moment. On a cluster that is not thrown away the demo's releases, namespace and Node
 * are deleted again, the CRDs stay.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureClusterApi, type ClusterApiReport } from './cluster-api.ts';
import { ensureCrds } from './crds.ts';
import { applyGenericSamples, deleteClusterScopedSamples } from './generic-samples.ts';
import { openCluster } from './environment.ts';
import { startFakes } from './fakes.ts';
import { playKubelet } from './kubelet.ts';
import { LiveTable } from './live-table.ts';
import { AT_DELAY_MS, AT_NAME, CLUSTER_NAME, NAMESPACE, NODE_NAME } from './names.ts';
import { observeRows } from './observe.ts';
import { readContainerRun } from './pods.ts';
import { ATS, MAILGUN_CLUSTERS } from './resources.ts';
import type { At, MailgunCluster } from './rows.ts';
import { applySamples, clearLeftovers, createNamespace, deleteSamples } from './samples.ts';
import { Shutdown } from './shutdown.ts';
import { installControllerCharts, startControllerProcesses } from './start-controllers.ts';
import { atSummary } from './summary.ts';
import type { Row } from './table.ts';

/** From the samples being applied to the last row converged; the At alone takes 10 s of it. */
const CONVERGE_TIMEOUT_MS = 90_000;
const POLL_MS = 500;
/** The At's pod's container, as at-scheduler names it. */
const COMMAND_CONTAINER = 'command';

const startedAt = Date.now();
const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)}s`;

/** An error's message and those of its causes (fetch's "fetch failed" says nothing without them). */
function message(error: unknown): string {
  let text = '';
  for (let link: unknown = error; link !== undefined; link = link instanceof Error ? link.cause : undefined) {
    const part = link instanceof Error ? link.message : JSON.stringify(link);
    if (!text.includes(part)) text = text ? `${text} (${part})` : part;
  }
  return text;
}

const table = new LiveTable(process.stdout);
const say = (line: string): void => {
  table.note(line);
};
const shutdown = new Shutdown(say);

/** What runs, newest last, for the line printed on the way out. */
const running: string[] = [];
let logDir: string | undefined;
let clusterApi: ClusterApiReport | undefined;

async function demo(): Promise<number> {
  const { signal } = shutdown;
  const cluster = await openCluster(process.env, shutdown, say);
  signal.throwIfAborted();
  const { client } = cluster;
  if (!cluster.outlivesDemo) running.push(cluster.mode === 'node' ? 'the node' : 'the control plane');

  const fakes = await startFakes(shutdown, cluster.mode === 'node' ? cluster.node.hostAddress : undefined);
  running.push('the fakes');
  say(`fake Hetzner Cloud API at ${fakes.hcloud.url}, Mailgun peer at ${fakes.mailgun.url}`);

  const crds = await ensureCrds(client, signal);
  if (crds.installed.length > 0) say(`installed CRDs: ${crds.installed.join(', ')}`);
  if (crds.present.length > 0) say(`CRDs already installed, left as they are: ${crds.present.join(', ')}`);

  await clearLeftovers(client, signal, say);
  if (cluster.outlivesDemo)
    // Undone after the objects are deleted (steps run newest first): the last word on what stays.
    shutdown.defer('report the CRDs', () => {
      say(`left installed: the CRDs ${[...crds.installed, ...crds.present].join(', ')}`);
      if (clusterApi?.owner === 'demo' && clusterApi.installedCrds)
        say(`  and Cluster API ${clusterApi.version}'s CRDs (*.cluster.x-k8s.io), without its manager`);
      return Promise.resolve();
    });
  // On a node of its own too: the same steps as on `pnpm cluster up`'s node, so both paths are one.
  if (cluster.mode !== 'embedded')
    shutdown.defer(`delete namespace ${NAMESPACE} and Node ${NODE_NAME}`, () => deleteSamples(client, say));
  await createNamespace(client, signal);

  const dir = await mkdtemp(join(tmpdir(), 'loopwright-demo-'));
  logDir = dir;
  clusterApi = await ensureClusterApi({ shutdown, say }, cluster, dir);
  if (clusterApi.owner === 'cluster')
    say(`Cluster API is installed in this cluster: its controllers will own the demo's Cluster`);
  else {
    running.push('Cluster API');
    const crds = clusterApi.installedCrds ? ', its CRDs installed' : '';
    say(
      `Cluster API ${clusterApi.version}: its core manager runs on this machine for namespace ${NAMESPACE}${crds}`,
    );
  }
  running.push('the controllers');
  const controllers =
    cluster.mode === 'node'
      ? await installControllerCharts({ shutdown, say }, cluster, fakes, dir)
      : await startControllerProcesses({ shutdown, say }, cluster, fakes, dir);
  say(`controllers ready after ${seconds(startedAt)}`);

  const { expectedProviderID } = await applySamples(client, fakes.hcloudState);
  const generic = await applyGenericSamples(client);
  if (generic.some(({ type }) => !type.namespaced))
    shutdown.defer('delete the cluster-scoped samples', () => deleteClusterScopedSamples(client, generic));
  const appliedAt = Date.now();
  say(
    `applied: At ${AT_NAME} (due in ${AT_DELAY_MS / 1000}s), Cluster + MailgunCluster ${CLUSTER_NAME}, ` +
      `Node ${NODE_NAME} (tainted, server ${expectedProviderID.replace('hcloud://', '')} in the fake project)` +
      generic.map(({ kind, name }) => `, ${kind} ${name}`).join(''),
  );
  const kubeletPlayed = cluster.mode === 'embedded';
  if (kubeletPlayed) {
    say(
      `no kubelet in the embedded control plane: the demo plays kubelet for the At's pod (Running, then Succeeded, exit 0)`,
    );
    playKubelet(client, signal).catch((error: unknown) => {
      if (!signal.aborted) say(`playing kubelet failed: ${message(error)}`);
    });
  }

  let rows: Row[] = [];
  let failing = false;
  for (;;) {
    signal.throwIfAborted();
    try {
      rows = await observeRows(client, expectedProviderID, generic);
      failing = false;
    } catch (error) {
      // A blip of the API server is no reason to give up: the next poll tries again, until the deadline.
      if (!failing && !signal.aborted) say(`reading the samples failed, retrying: ${message(error)}`);
      failing = true;
    }
    table.update(rows);
    if (rows.every((row) => row.converged)) break;
    const failure = await controllers.failure();
    if (failure) throw new Error(failure);
    if (Date.now() - appliedAt > CONVERGE_TIMEOUT_MS) {
      table.finish();
      const pending = rows
        .filter((row) => !row.converged)
        .map((row) => `${row.kind} ${row.name} (${row.status})`);
      say(
        `not converged after ${CONVERGE_TIMEOUT_MS / 1000}s: ${pending.join(', ')}; controller logs: ${logDir}`,
      );
      return 1;
    }
    await sleep(POLL_MS, undefined, { signal });
  }
  table.finish();
  say(`all converged, ${seconds(appliedAt)} after the samples were applied:`);
  const podName = (await client.resource<At>(ATS).getOptional({ namespace: NAMESPACE, name: AT_NAME }))
    ?.status?.podName;
  const podRun = podName && (await readContainerRun(client, podName, COMMAND_CONTAINER));
  say(`  ${atSummary(AT_NAME, podRun || undefined, kubeletPlayed)}`);
  const mails = fakes.acceptedMailIds();
  say(
    `  MailgunCluster ${CLUSTER_NAME}: Mailgun accepted ${mails.length} request mail${mails.length === 1 ? '' : 's'} for it; ` +
      'Ready stays False until a human builds the cluster',
  );
  const messageID = (
    await client
      .resource<MailgunCluster>(MAILGUN_CLUSTERS)
      .getOptional({ namespace: NAMESPACE, name: CLUSTER_NAME })
  )?.status?.messageID;
  if (messageID && !mails.includes(messageID))
    say(
      `  but its message id ${messageID} is not from the demo's Mailgun peer: another mailgun-cluster ` +
        `controller in this cluster reconciles namespace ${NAMESPACE} too`,
    );
  say(`  Node ${NODE_NAME}: initialised from its Hetzner server (providerID, labels), taint removed`);
  for (const { kind, name, status, detail } of rows.slice(rows.length - generic.length))
    say(`  ${kind} ${name}: ${status} (${detail})`);
  return 0;
}

let exiting: Promise<never> | undefined;
function exit(code: number, why?: string): Promise<never> {
  exiting ??= (async () => {
    // The table stays as it was last drawn; what follows is printed below it.
    table.finish();
    if (why) say(why);
    const stopping = [...running].reverse();
    const last = stopping.pop();
    if (last) say(`stopping ${stopping.length > 0 ? `${stopping.join(', ')} and ${last}` : last}`);
    // Long enough for a node's start (which cannot be interrupted) to end and register its stop.
    await shutdown.run(flow, 180_000);
    const logs = logDir ? `; controller logs kept in ${logDir}` : '';
    say(`demo ${code === 0 ? 'done' : 'ended'} after ${seconds(startedAt)}${logs}`);
    process.exit(code);
  })();
  return exiting;
}

const flow = demo();
for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(name, () => {
    if (exiting) {
      say('interrupted again: quitting without cleaning up');
      process.exit(130);
    }
    void exit(130, `interrupted (${name}): cleaning up, Ctrl-C again to quit at once`);
  });
flow.then(
  (code) => exit(code),
  (error: unknown) => exit(1, shutdown.started ? undefined : `demo failed: ${message(error)}`),
);
