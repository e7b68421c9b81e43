/**
 * `pnpm demo`: the three controllers at work, in one command. Without KUBECONFIG it starts a control
 * plane of its own; with KUBECONFIG it uses that cluster and says so. Then: the fake Hetzner Cloud API
 * and the Mailgun peer, the CRDs, the controllers (child processes, logs in a temporary directory), one
 * sample object per controller, and a live table until all three converged (exit 0) or 90 s passed
 * (exit 1, naming what did not converge). Ctrl-C stops everything at any moment; on a cluster of
 * KUBECONFIG the demo's namespace and Node are deleted again, the CRDs stay.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ControllerProcess, controllerSpecs } from './controllers.ts';
import { ensureCrds } from './crds.ts';
import { openCluster, type DemoCluster } from './environment.ts';
import { startFakes } from './fakes.ts';
import { playKubelet } from './kubelet.ts';
import { LiveTable } from './live-table.ts';
import { AT_DELAY_MS, AT_NAME, CLUSTER_NAME, NAMESPACE, NODE_NAME } from './names.ts';
import { observeRows } from './observe.ts';
import { applySamples, clearLeftovers, createNamespace, deleteSamples } from './samples.ts';
import { Shutdown } from './shutdown.ts';
import type { Row } from './table.ts';

/** From the samples being applied to the last row converged; the At alone takes 10 s of it. */
const CONVERGE_TIMEOUT_MS = 90_000;
const POLL_MS = 500;

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

/** What is running, for the lines printed on the way out. */
let mode: DemoCluster['mode'] | undefined;
let fakesStarted = false;
let logDir: string | undefined;

async function demo(): Promise<number> {
  const { signal } = shutdown;
  const cluster = await openCluster(process.env, shutdown, say);
  mode = cluster.mode;
  const { client } = cluster;

  const fakes = await startFakes(shutdown);
  fakesStarted = true;
  say(`fake Hetzner Cloud API at ${fakes.hcloud.url}, Mailgun peer at ${fakes.mailgun.url}`);

  const crds = await ensureCrds(client, signal);
  if (crds.installed.length > 0) say(`installed CRDs: ${crds.installed.join(', ')}`);
  if (crds.present.length > 0) say(`CRDs already installed, left as they are: ${crds.present.join(', ')}`);
  if (crds.standIns.length > 0)
    say(`  ${crds.standIns.join(', ')}: minimal stand-ins, as Cluster API is not installed`);

  await clearLeftovers(client, signal, say);
  if (cluster.mode === 'kubeconfig') {
    // Undone after the objects are deleted (steps run newest first): the last word on what stays.
    shutdown.defer('report the CRDs', () => {
      const charts = [...crds.installed, ...crds.present].filter((name) => !crds.standIns.includes(name));
      say(`left installed: the CRDs ${charts.join(', ')}`);
      if (crds.standIns.length > 0)
        say(
          `  and the Cluster API stand-ins ${crds.standIns.join(', ')} (kubectl delete crd ${crds.standIns.join(' ')})`,
        );
      return Promise.resolve();
    });
    shutdown.defer(`delete namespace ${NAMESPACE} and Node ${NODE_NAME}`, () => deleteSamples(client, say));
  }
  await createNamespace(client, signal);

  const controllers: ControllerProcess[] = [];
  logDir = await mkdtemp(join(tmpdir(), 'loopwright-demo-'));
  say(`controller logs: ${logDir}`);
  for (const spec of controllerSpecs(fakes)) {
    signal.throwIfAborted();
    const controller = await ControllerProcess.start(spec, logDir, cluster.kubeconfigEnv);
    shutdown.defer(`stop ${spec.name}`, () => controller.stop());
    controllers.push(controller);
  }
  say(
    `starting ${controllers.map((c) => `${c.name} (:${c.healthPort})`).join(', ')} in namespace ${NAMESPACE}`,
  );
  await Promise.all(controllers.map((c) => c.waitReady(60_000, signal)));
  say(`controllers ready after ${seconds(startedAt)}`);

  const { expectedProviderID } = await applySamples(client, fakes.hcloudState);
  const appliedAt = Date.now();
  say(
    `applied: At ${AT_NAME} (due in ${AT_DELAY_MS / 1000}s), Cluster + MailgunCluster ${CLUSTER_NAME}, ` +
      `Node ${NODE_NAME} (tainted, server ${expectedProviderID.replace('hcloud://', '')} in the fake project)`,
  );
  if (cluster.mode === 'embedded') {
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
      rows = await observeRows(client, expectedProviderID);
      failing = false;
    } catch (error) {
      // A blip of the API server is no reason to give up: the next poll tries again, until the deadline.
      if (!failing && !signal.aborted) say(`reading the samples failed, retrying: ${message(error)}`);
      failing = true;
    }
    table.update(rows);
    if (rows.every((row) => row.converged)) break;
    const exited = controllers.find((c) => !c.running);
    if (exited) throw new Error(`${exited.name} exited; its log ends with:\n${await exited.tail()}`);
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
  say(`all three converged, ${seconds(appliedAt)} after the samples were applied:`);
  const mails = fakes.acceptedMails();
  say(`  At ${AT_NAME}: its command ran once, in a pod, when it was due; the outcome is in its status`);
  say(
    `  MailgunCluster ${CLUSTER_NAME}: Mailgun accepted ${mails} request mail${mails === 1 ? '' : 's'} for it; ` +
      'Ready stays False until a human builds the cluster',
  );
  say(`  Node ${NODE_NAME}: initialised from its Hetzner server (providerID, labels), taint removed`);
  return 0;
}

let exiting: Promise<never> | undefined;
function exit(code: number, why?: string): Promise<never> {
  exiting ??= (async () => {
    // The table stays as it was last drawn; what follows is printed below it.
    table.finish();
    if (why) say(why);
    const running = [logDir && 'the controllers', fakesStarted && 'the fakes'].filter(Boolean);
    if (mode === 'embedded') running.push('the control plane');
    const last = running.pop();
    if (last) say(`stopping ${running.length > 0 ? `${running.join(', ')} and ${last}` : last}`);
    await shutdown.run(flow);
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
