/**
 * How a test process finds the node a global setup (or `pnpm cluster up`) started: the admin kubeconfig
 * is in KUBECONFIG as for the control plane, the rest in LOOPWRIGHT_NODE as JSON.
 */
import type { Cluster } from './cluster.ts';

export interface TestNode {
  nodeName: string;
  /** The host's address on the node bridge: pods reach servers of the test run that listen here. */
  hostAddress: string;
  /** containerd's socket, to import images into the node. */
  containerdSocket: string;
  /** The node's OCI registry, `127.0.0.1:<port>` (plain HTTP): what it pulls images from. */
  registry: string;
}

const variable = 'LOOPWRIGHT_NODE';

export function testNodeOf(cluster: Cluster): TestNode {
  return {
    nodeName: cluster.nodeName,
    hostAddress: cluster.network.hostAddress,
    containerdSocket: cluster.containerdSocket,
    registry: cluster.registry,
  };
}

/**
 * The shell exports for a node's test processes (what `pnpm -s cluster env` prints); LOOPWRIGHT_REGISTRY
 * is the node's registry, for the README's install commands with `ghcr.io` replaced by it.
 */
export function testNodeExports(kubeconfigPath: string, node: TestNode): Record<string, string> {
  return {
    KUBECONFIG: kubeconfigPath,
    LOOPWRIGHT_CONTROLPLANE: '1',
    [variable]: JSON.stringify(node),
    LOOPWRIGHT_REGISTRY: node.registry,
  };
}

/** The node of this test run, if a global setup or `pnpm cluster up` provided one. */
export function findTestNode(env: NodeJS.ProcessEnv = process.env): TestNode | undefined {
  const text = env[variable];
  return text && env.KUBECONFIG ? (JSON.parse(text) as TestNode) : undefined;
}

export function loadTestNode(): TestNode {
  const node = findTestNode();
  if (!node)
    throw new Error(
      `${variable} is not set: run with the e2e global setup, or eval "$(pnpm -s cluster env)"`,
    );
  return node;
}
