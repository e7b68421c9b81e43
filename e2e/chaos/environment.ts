/**
 * The fault suite's world: a real node started in this process (so the suite can restart its
 * components), this checkout's release published into the node's registry, the three charts installed
 * from it with the README's commands (2 replicas each, the cache dump turned on through `extraArgs`),
 * and the third parties as the e2e suites run them: the fake Hetzner Cloud API and the Mailgun peer on
 * the node bridge, Cluster API's own manager on this host. `stop()` undoes all of it, node included.
 */
import {
  ensureHelmBinary,
  helm,
  loadImagesIntoNode,
  startCluster,
  startClusterApi,
  testNodeExports,
  testNodeOf,
  type Cluster,
} from '@loopwright/cluster';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { startFakeHcloud, type FakeHcloud } from '@loopwright/fakes/hcloud';
import { startMailgunPeer, type MailgunPeer } from '@loopwright/fakes/mailgun';
import type { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releaseLocally } from '../global-setup.ts';
import { repoRoot } from '../src/charts.ts';
import { adminKubeconfigPath, createOrReplaceSecret } from '../src/kube.ts';
import { enforceRestricted, leaderAmong, pods } from '../src/node.ts';
import {
  fromRegistry,
  readmeInstall,
  readmeSecret,
  secretData,
  testOnlyArgs,
  type ReadmeInstall,
} from '../src/readme-install.ts';
import { e2eReleasesExports, nextPatch } from '../src/release.ts';

/** Where each replica serves its cache dump (`--cache-dump-bind-address`), on its pod IP. */
export const CACHE_DUMP_PORT = 9090;
/** The charts' `metricsPort` default: /metrics on every replica's pod IP. */
export const METRICS_PORT = 8080;

/** The resource whose watch cache the API server runs without, so that its watches read etcd (fault 3). */
export const UNCACHED_RESOURCE = 'ats.cnat.programming-kubernetes.info';

/** One installed controller: its release, where its pods are, and the Lease they share. */
export interface Controller {
  name: 'at-scheduler' | 'mailgun-cluster' | 'cloud-node';
  release: string;
  namespace: string;
  selector: string;
  lease: string;
}

export interface ChaosEnvironment {
  cluster: Cluster;
  admin: KubeConfig;
  /** The namespace of the suite's Ats, Clusters and MailgunClusters. */
  work: TestNamespace;
  hcloud: FakeHcloud;
  /** The Hetzner network cloud-node resolves at start; every server of the suite is in it. */
  networkId: number;
  mailgun: MailgunPeer;
  /** The label (`key=value`) of the suite's Nodes: cloud-node's `nodeLabelSelector`. */
  nodeLabel: { key: string; value: string };
  controllers: readonly Controller[];
  stop(): Promise<void>;
}

const log = (line: string): void => void process.stderr.write(`[chaos] ${line}\n`);

/** The chart's Lease default for each controller (its `leaderElection.leaseName`). */
const LEASES = {
  'at-scheduler': 'at-scheduler',
  'mailgun-cluster': 'mailgun-cluster-controller',
  'cloud-node': 'cloud-node',
} as const;

/** What the set-up did, undone in reverse order, each step whatever the others' fate. */
class Cleanups {
  readonly #undo: (() => Promise<unknown>)[] = [];
  push(undo: () => Promise<unknown>): void {
    this.#undo.push(undo);
  }
  async run(): Promise<void> {
    for (const undo of this.#undo.reverse())
      await undo().catch((error: unknown) => {
        log(`cleanup failed: ${String(error)}`);
      });
  }
}

export async function startChaosEnvironment(): Promise<ChaosEnvironment> {
  const cleanups = new Cleanups();
  try {
    return await start(cleanups);
  } catch (error) {
    await cleanups.run();
    throw error;
  }
}

async function start(cleanups: Cleanups): Promise<ChaosEnvironment> {
  await ensureHelmBinary({ log });
  const cluster = await startCluster({
    log,
    apiServerFlags: [`--watch-cache-sizes=${UNCACHED_RESOURCE}#0`],
  });
  cleanups.push(() => cluster.stop());
  const node = testNodeOf(cluster);
  // The e2e helpers find the node, its kubeconfig and the releases through the environment.
  Object.assign(process.env, testNodeExports(cluster.kubeconfigPath, node));
  const scratch = await mkdtemp(join(tmpdir(), 'loopwright-chaos-'));
  cleanups.push(() => rm(scratch, { recursive: true, force: true }));
  // The stand-in busybox, the Ats' image; the controllers' images come from the release.
  await loadImagesIntoNode(node, { outDir: join(scratch, 'images'), log, controllers: [] });
  const current = readmeInstall('at-scheduler').version;
  await releaseLocally(`v${current}`, join(scratch, 'releases'));
  Object.assign(
    process.env,
    e2eReleasesExports({
      dir: join(scratch, 'releases'),
      registry: node.registry,
      current,
      next: nextPatch(current),
    }),
  );

  const admin = loadTestKubeConfig();
  const work = await createTestNamespace(admin, 'chaos-work');
  cleanups.push(() => work.cleanup());
  const clusterApi = await startClusterApi({ kubeConfig: admin, namespace: work.name });
  cleanups.push(() => clusterApi.stop());

  const mailgunKey = `key-${randomBytes(16).toString('hex')}`;
  const mailgun = await startMailgunPeer({ apiKey: mailgunKey, host: node.hostAddress });
  cleanups.push(() => mailgun.stop());
  const hcloudToken = randomBytes(32).toString('hex');
  const hcloud = await startFakeHcloud({ token: hcloudToken, host: node.hostAddress });
  cleanups.push(() => hcloud.close());
  const network = 'chaos-k8s';
  const networkId = hcloud.networks.add({ name: network, ip_range: '10.0.0.0/16' }).id;
  const nodeLabel = { key: 'loopwright.dev/chaos', value: randomBytes(3).toString('hex') };

  const secrets = {
    'mailgun-cluster': secretData(readmeSecret('mailgun-cluster'), { MAILGUN_API_KEY: mailgunKey }),
    'cloud-node': secretData(readmeSecret('cloud-node'), {
      HCLOUD_TOKEN: hcloudToken,
      HCLOUD_NETWORK: network,
    }),
  };
  const values = {
    'at-scheduler': {},
    'mailgun-cluster': { 'mailgun.url': mailgun.url },
    'cloud-node': { 'hcloud.endpoint': hcloud.url, nodeLabelSelector: `${nodeLabel.key}=${nodeLabel.value}` },
  };
  const controllers: Controller[] = [];
  for (const name of ['at-scheduler', 'mailgun-cluster', 'cloud-node'] as const) {
    const readme = fromRegistry(readmeInstall(name), node.registry);
    if (name !== 'at-scheduler') {
      const secret = readmeSecret(name);
      await createOrReplaceSecret(admin, secret.namespace, secret.name, secrets[name]);
    }
    const controller = await install(admin, readme, name, values[name], cleanups);
    controllers.push(controller);
  }
  for (const { namespace, lease, selector } of controllers)
    await leaderAmong(admin, namespace, lease, selector, 60_000);
  return {
    cluster,
    admin,
    work,
    hcloud,
    networkId,
    mailgun,
    nodeLabel,
    controllers,
    stop: () => cleanups.run(),
  };
}

/**
 * The README's command from the node's registry, plus `--wait` and what only a test sets: where the
 * third parties listen, and the cache dump on every replica.
 */
async function install(
  admin: KubeConfig,
  readme: ReadmeInstall,
  name: Controller['name'],
  values: Record<string, unknown>,
  cleanups: Cleanups,
): Promise<Controller> {
  const { release, namespace } = readme;
  if (namespace !== 'kube-system') await enforceRestricted(admin, namespace);
  cleanups.push(() =>
    helm(
      ['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait', '--timeout', '2m'],
      {
        kubeconfig: adminKubeconfigPath(),
        timeoutMs: 150_000,
      },
    ),
  );
  const started = performance.now();
  await helm(
    [
      ...readme.args,
      ...testOnlyArgs(readme, {
        timeout: '3m',
        values: { ...values, extraArgs: [`--cache-dump-bind-address=:${CACHE_DUMP_PORT}`] },
      }),
    ],
    { kubeconfig: adminKubeconfigPath(), cwd: repoRoot, timeoutMs: 200_000 },
  );
  log(`${name} installed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const selector = `app.kubernetes.io/name=${name},app.kubernetes.io/instance=${release}`;
  // Two Ready replicas, as the chart's default says.
  await eventually(
    async () => {
      const ready = (await pods(admin, namespace, selector)).filter((pod) => pod.ready && !pod.deleting);
      if (ready.length !== 2) throw new Error(`${name}: ${ready.length} Ready replicas`);
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  return { name, release, namespace, selector, lease: LEASES[name] };
}
