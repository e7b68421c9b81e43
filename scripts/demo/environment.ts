/**
 * Which cluster the demo runs against, in this order:
 *
 * - KUBECONFIG set: that cluster (resolved exactly as the controllers resolve it, so the line printed
 *   names the cluster they will use). When the environment also names a Loopwright node
 *   (LOOPWRIGHT_NODE, as `eval "$(pnpm -s cluster env)"` sets after `pnpm cluster up`), the demo uses it
 *   as in `node` mode below, without starting or stopping it.
 * - else `node`: a real single-node cluster started on this machine (control plane, containerd, kubelet,
 *   kube-proxy), stopped at the end; the controllers run as pods from their charts.
 * - else, when no node can start here (not root, tools missing, LOOPWRIGHT_DEMO_NODE=0, a failed start),
 *   `embedded`: the API-server-only control plane (real kube-apiserver, etcd, kube-controller-manager on
 *   loopback), with one line saying why.
 */
import { describeContext, KubeClient, loadKubeConfig } from '@loopwright/runtime';
import {
  findTestNode,
  NodeUnavailableError,
  startCluster,
  testNodeOf,
  type TestNode,
} from '@loopwright/cluster';
import { startControlPlane } from '@loopwright/envtest';
import type { Shutdown } from './shutdown.ts';

/** Set to `0` to skip the node and go straight to the fallback (what the embedded-mode tests do). */
const SKIP_NODE_VARIABLE = 'LOOPWRIGHT_DEMO_NODE';

interface ClusterBase {
  client: KubeClient;
  /** The `KUBECONFIG` value the controllers (or helm) get. */
  kubeconfigEnv: string;
  /** The cluster stays after the demo (a user's, or the one of `pnpm cluster up`): say what is left. */
  outlivesDemo: boolean;
}

export type DemoCluster =
  /** A real node runs pods: the controllers are installed from their charts. */
  | (ClusterBase & { mode: 'node'; node: TestNode })
  /** `embedded`: nobody else uses this cluster, and no kubelet runs pods in it. */
  | (ClusterBase & { mode: 'embedded' | 'kubeconfig' });

type Say = (line: string) => void;

function connect(kubeConfig: ReturnType<typeof loadKubeConfig>, shutdown: Shutdown): KubeClient {
  const client = new KubeClient(kubeConfig, { rateLimit: false, userAgent: 'loopwright-demo' });
  shutdown.defer('close the API connections', () => client.close());
  return client;
}

async function openKubeconfigCluster(
  env: Record<string, string | undefined>,
  kubeconfigEnv: string,
  shutdown: Shutdown,
  say: Say,
): Promise<DemoCluster> {
  const kubeConfig = loadKubeConfig({ env });
  const context = describeContext(kubeConfig);
  const node = env[SKIP_NODE_VARIABLE] === '0' ? undefined : findTestNode(env);
  say(
    node
      ? `using the Loopwright node of KUBECONFIG and LOOPWRIGHT_NODE (node ${node.nodeName}, server ${context.server})`
      : `using the cluster of KUBECONFIG (context ${context.context}, server ${context.server})`,
  );
  const client = connect(kubeConfig, shutdown);
  // Fail here, with the server's name, rather than halfway through with a less obvious error.
  const version = await client.fetch('/version').catch((error: unknown) => {
    throw new Error(
      `cannot reach ${context.server}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  });
  if (!version.ok)
    throw new Error(
      `cannot reach ${context.server}: HTTP ${version.status} ${(await version.text()).trim()}`,
    );
  const base = { client, kubeconfigEnv, outlivesDemo: true };
  return node ? { ...base, mode: 'node', node } : { ...base, mode: 'kubeconfig' };
}

/** Starts a node of its own, or says why none can start here. */
async function startOwnNode(
  env: Record<string, string | undefined>,
  shutdown: Shutdown,
  say: Say,
): Promise<DemoCluster | { unavailable: string }> {
  if (env[SKIP_NODE_VARIABLE] === '0') return { unavailable: `${SKIP_NODE_VARIABLE}=0` };
  say('no KUBECONFIG: starting a single-node cluster on this machine (control plane, containerd, kubelet)');
  let cluster;
  try {
    cluster = await startCluster({
      log: (line) => {
        say(`  ${line}`);
        // The machine lock's line (node/machine-lock.ts): most likely the node of `pnpm cluster up`.
        if (line.startsWith('waiting for the node of process'))
          say('  (to run the demo on that node instead: Ctrl-C, eval "$(pnpm -s cluster env)", pnpm demo)');
      },
    });
  } catch (error) {
    if (error instanceof NodeUnavailableError) return { unavailable: error.message };
    // One line: the error of a failed start may carry a log tail; the tail is not the reason.
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    return { unavailable: `the node did not start: ${reason}` };
  }
  shutdown.defer('stop the node', () => cluster.stop());
  const client = connect(loadKubeConfig({ kubeconfig: cluster.kubeconfigPath }), shutdown);
  return {
    mode: 'node',
    node: testNodeOf(cluster),
    client,
    kubeconfigEnv: cluster.kubeconfigPath,
    outlivesDemo: false,
  };
}

async function startEmbedded(shutdown: Shutdown, say: Say): Promise<DemoCluster> {
  const controlPlane = await startControlPlane({
    log: (line) => {
      say(`  ${line}`);
    },
  });
  shutdown.defer('stop the control plane', () => controlPlane.stop());
  return {
    mode: 'embedded',
    client: connect(loadKubeConfig({ kubeconfig: controlPlane.kubeconfigPath }), shutdown),
    kubeconfigEnv: controlPlane.kubeconfigPath,
    outlivesDemo: false,
  };
}

export async function openCluster(
  env: Record<string, string | undefined>,
  shutdown: Shutdown,
  say: Say,
): Promise<DemoCluster> {
  const kubeconfigEnv = env.KUBECONFIG?.trim();
  if (kubeconfigEnv) return openKubeconfigCluster(env, kubeconfigEnv, shutdown, say);
  const node = await startOwnNode(env, shutdown, say);
  if (!('unavailable' in node)) return node;
  say(
    `no node here (${node.unavailable}): falling back to the API-server-only control plane ` +
      `(kube-apiserver, etcd, kube-controller-manager); the demo plays kubelet for the At's pod`,
  );
  return startEmbedded(shutdown, say);
}
