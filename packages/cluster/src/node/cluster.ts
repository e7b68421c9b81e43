/**
 * A real single-node cluster on this machine: the test control plane serving on a node bridge, plus
 * kube-scheduler, a private containerd with runc and CNI bridge networking, a kubelet registered as a
 * Ready Node, and kube-proxy. `stop()` leaves the machine as `startCluster()` found it.
 */
import { KubeConfig, type V1Node } from '@kubernetes/client-node';
import { KubeClient } from '@loopwright/client';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ensureControlPlaneBinaries,
  freeLoopbackPort,
  kubeconfigYaml,
  ManagedProcess,
  startControlPlane,
  type ControlPlane,
} from '@loopwright/envtest';
import { buildPauseImage, importImage, pauseImage } from '../images/index.ts';
import { createCgroupRoot, removeCgroupRoot } from './cgroups.ts';
import { containerdSocketName, killShims, startContainerd, writeRegistryHosts } from './containerd.ts';
import { startLocalRegistry, type LocalRegistry } from '../registry/registry.ts';
import { kubeletArgs, kubeletConfig, type KubeletSettings } from './kubelet.ts';
import { kubeProxyConfig } from './kube-proxy.ts';
import { acquireNodeLock } from './machine-lock.ts';
import { readMachineState, restoreMachineState, type MachineState } from './machine.ts';
import { cniConfig, createNodeNetwork, defaultNodeNetwork, type NodeNetwork } from './network.ts';
import { blackHoleApiServer, lowerMemoryLimit, resetApiServerConnections } from './faults.ts';
import { generateNodePki } from './pki.ts';
import { assertNodeCanStart } from './requirements.ts';

export interface Cluster extends ControlPlane {
  nodeName: string;
  network: NodeNetwork;
  /** containerd's socket, e.g. for `ctr --address`. */
  containerdSocket: string;
  /** Imports an OCI image archive into the node (the name comes from the archive's index). */
  importImage(archivePath: string): Promise<void>;
  /**
   * The node's registry, `127.0.0.1:<port>`: an OCI registry beside it that its containerd pulls from
   * (plain HTTP, loopback only), as a cluster pulls from a user's registry.
   */
  registry: string;
  /**
   * Fault hook: restarts the kubelet (SIGTERM, then the same command); resolves once its /healthz
   * answers 200. Its containers keep running meanwhile, as on any node.
   */
  restartKubelet(): Promise<void>;
  /**
   * Fault hook: drops the traffic between a pod and the API server, silently (see faults.ts); resolves
   * to the restore. Rules left in place are removed with the node's nftables table on stop.
   */
  blackHoleApiServer(podIp: string): Promise<() => Promise<void>>;
  /**
   * Fault hook: resets every connection between a pod and the API server (`ss -K`: the server's sockets
   * are destroyed and the pod gets a TCP reset), as a restarted load balancer does; its watches must
   * resume from their last resourceVersion. Returns how many sockets were destroyed.
   */
  resetApiServerConnections(podIp: string): Promise<number>;
  /**
   * Fault hook: lowers a running container's memory limit to its usage plus `headroomBytes` (see
   * faults.ts), so that it is OOM-killed as it grows; `containerId` is the id without `containerd://`.
   */
  lowerMemoryLimit(containerId: string, headroomBytes: number): Promise<number>;
}

export interface ClusterOptions {
  /** Directory for all state; default: a fresh temporary directory, removed on stop. */
  dir?: string;
  /** Keep the state directory after stop (for debugging); default: LOOPWRIGHT_KEEP_CONTROLPLANE=1. */
  keepDir?: boolean;
  log?: (line: string) => void;
  /** How long to wait for the node to become Ready. */
  startTimeoutMs?: number;
  /** How long to wait for another node on this machine to stop first. */
  lockTimeoutMs?: number;
  /** Extra kube-apiserver flags (see `ControlPlaneOptions.apiServerFlags`). */
  apiServerFlags?: string[];
}

const nodeName = 'loopwright-node';
const cgroupRoot = 'loopwright';

/** kube-controller-manager's controllers for a node: all the default ones but the token-signing pair. */
const nodeControllers = ['*', '-bootstrap-signer-controller', '-token-cleaner-controller'];

async function waitForReadyNode(
  kubeconfigPath: string,
  deadline: number,
  kubelet: ManagedProcess,
): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const client = new KubeClient(kc, { rateLimit: false });
  const nodes = client.resource<V1Node>({
    group: '',
    version: 'v1',
    plural: 'nodes',
    kind: 'Node',
    namespaced: false,
  });
  try {
    for (;;) {
      if (kubelet.exited) throw new Error(`the kubelet exited during start-up:\n${await kubelet.tail()}`);
      const node = await nodes.getOptional({ name: nodeName }).catch(() => undefined);
      if (node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
      if (Date.now() > deadline)
        throw new Error(`node ${nodeName} not Ready in time:\n${await kubelet.tail()}`);
      await sleep(250);
    }
  } finally {
    await client.close();
  }
}

/**
 * Waits for a component's /healthz on the loopback to answer 200 (kube-proxy's does once its rules are
 * programmed: Services work from then on).
 */
async function waitForHealthz(
  name: string,
  healthzPort: number,
  deadline: number,
  component: ManagedProcess,
): Promise<void> {
  for (;;) {
    if (component.exited) throw new Error(`${name} exited during start-up:\n${await component.tail()}`);
    const status = await fetch(`http://127.0.0.1:${healthzPort}/healthz`).then(
      (response) => response.status,
      () => undefined,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${name} not healthy in time:\n${await component.tail()}`);
    await sleep(250);
  }
}

/**
 * The previous node's process died without stopping it (SIGKILL): its containers, mounts and rules
 * remain. Puts the machine back as that node found it.
 */
async function restoreAfterAbandonedNode(
  abandoned: MachineState,
  scratchDir: string,
  log: (line: string) => void,
): Promise<void> {
  await removeCgroupRoot(cgroupRoot);
  await killShims(containerdSocketName);
  const restored = await restoreMachineState(abandoned, scratchDir);
  log(`restored the machine after a node that was not stopped: ${restored.join('; ') || 'nothing left'}`);
}

/**
 * What {@link startCluster} does first, on its own: when a node's process died without stopping it,
 * puts the machine back as that node found it. For a caller that records the machine's state before
 * starting a node (a test of the restore) and must not record what a killed run left behind. Waits, as
 * `startCluster` does, while another node runs.
 */
export async function restoreAbandonedNode(
  options: Pick<ClusterOptions, 'log' | 'lockTimeoutMs'> = {},
): Promise<void> {
  const log = options.log ?? (() => undefined);
  const lock = await acquireNodeLock(options.lockTimeoutMs ?? 20 * 60_000, log);
  try {
    if (lock.abandoned === undefined) return;
    const scratchDir = await mkdtemp(join(tmpdir(), 'loopwright-restore-'));
    try {
      await restoreAfterAbandonedNode(lock.abandoned, scratchDir, log);
    } finally {
      await rm(scratchDir, { recursive: true, force: true });
    }
  } finally {
    await lock.release();
  }
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  assertNodeCanStart();
  const binaries = await ensureControlPlaneBinaries({ log });
  const lock = await acquireNodeLock(options.lockTimeoutMs ?? 20 * 60_000, log);
  // From here: the wait for another node to stop is not the start's to count.
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  const keepDir = options.keepDir ?? process.env.LOOPWRIGHT_KEEP_CONTROLPLANE === '1';
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'loopwright-cluster-')));
  await mkdir(dir, { recursive: true });
  const network = defaultNodeNetwork;
  if (lock.abandoned) await restoreAfterAbandonedNode(lock.abandoned, dir, log);
  const machine = await readMachineState();
  await lock.saveMachineState(machine);

  const processes: ManagedProcess[] = [];
  let controlPlane: ControlPlane | undefined;
  let containerd: ManagedProcess | undefined;
  let registry: LocalRegistry | undefined;
  const containerdDir = join(dir, 'containerd');
  const socket = join(containerdDir, containerdSocketName);
  const cniConfDir = join(containerdDir, 'cni', 'net.d');
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // The kubelet first, so it restarts nothing; then every container (all live in the node's
    // cgroups), the shims, containerd, and the control plane; then the machine as it was.
    for (const p of [...processes].reverse()) await p.stop();
    await removeCgroupRoot(cgroupRoot);
    await killShims(containerdSocketName);
    await containerd?.stop();
    await registry?.stop();
    await controlPlane?.stop();
    const restored = await restoreMachineState(machine, dir);
    log(`node stopped; restored: ${restored.length === 0 ? 'nothing to restore' : restored.join('; ')}`);
    await lock.release();
    if (!keepDir && !options.dir) await rm(dir, { recursive: true, force: true });
  };

  try {
    await createNodeNetwork(network);
    await mkdir(join(dir, 'node-pki'));
    const pki = await generateNodePki(join(dir, 'node-pki'));
    controlPlane = await startControlPlane({
      dir: join(dir, 'controlplane'),
      keepDir: true,
      log,
      controllers: nodeControllers,
      ...(options.apiServerFlags ? { apiServerFlags: options.apiServerFlags } : {}),
      users: [
        { name: `system:node:${nodeName}`, groups: ['system:nodes'] },
        { name: 'system:kube-proxy', groups: [] },
        { name: 'system:kube-scheduler', groups: [] },
      ],
      node: {
        address: network.hostAddress,
        kubeletClientCertFile: pki.kubeletClientCertFile,
        kubeletClientKeyFile: pki.kubeletClientKeyFile,
      },
    });
    const cp = controlPlane;
    const caPem = await readFile(cp.caPath, 'utf8');
    const kubeconfigFor = async (user: string, file: string): Promise<string> => {
      const path = join(dir, file);
      await writeFile(path, kubeconfigYaml(cp.server, caPem, cp.tokens[user] ?? ''), { mode: 0o600 });
      return path;
    };

    const scheduler = new ManagedProcess(
      'kube-scheduler',
      binaries['kube-scheduler'],
      [
        `--kubeconfig=${await kubeconfigFor('system:kube-scheduler', 'scheduler.kubeconfig')}`,
        '--leader-elect=false',
        '--secure-port=0',
        '--v=1',
      ],
      join(dir, 'kube-scheduler.log'),
    );
    processes.push(scheduler);

    registry = await startLocalRegistry({ dir: join(dir, 'registry'), log });
    const registryConfigDir = join(containerdDir, 'certs.d');
    await writeRegistryHosts(registryConfigDir, registry.host);

    await createCgroupRoot(cgroupRoot);
    containerd = await startContainerd(
      { dir: containerdDir, socket, cri: { sandboxImage: pauseImage, cniConfDir, registryConfigDir } },
      deadline - Date.now(),
    );
    await importImage(await buildPauseImage(binaries.pause, join(dir, 'images')), { address: socket });
    await writeFile(join(cniConfDir, '10-loopwright.conflist'), cniConfig(network, join(dir, 'cni', 'ipam')));

    const kubeletDir = join(dir, 'kubelet');
    await mkdir(kubeletDir, { recursive: true });
    const settings: KubeletSettings = {
      dir: kubeletDir,
      nodeName,
      nodeAddress: network.hostAddress,
      port: await freeLoopbackPort(),
      healthzPort: await freeLoopbackPort(),
      containerdSocket: socket,
      cgroupRoot,
      clientCaFile: pki.caCertFile,
    };
    const kubeletConfigPath = join(kubeletDir, 'config.yaml');
    await writeFile(kubeletConfigPath, kubeletConfig(settings));
    const kubelet = new ManagedProcess(
      'kubelet',
      binaries.kubelet,
      kubeletArgs(
        settings,
        kubeletConfigPath,
        await kubeconfigFor(`system:node:${nodeName}`, 'kubelet.kubeconfig'),
      ),
      join(dir, 'kubelet.log'),
    );
    processes.push(kubelet);

    // Written once: kube-proxy exits when its config file changes under it.
    const proxyConfigPath = join(dir, 'kube-proxy.yaml');
    const proxyPorts = { healthz: await freeLoopbackPort(), metrics: await freeLoopbackPort() };
    await writeFile(
      proxyConfigPath,
      kubeProxyConfig(
        network,
        nodeName,
        await kubeconfigFor('system:kube-proxy', 'kube-proxy.kubeconfig'),
        proxyPorts,
      ),
    );
    const kubeProxy = new ManagedProcess(
      'kube-proxy',
      binaries['kube-proxy'],
      [`--config=${proxyConfigPath}`, '--v=1'],
      join(dir, 'kube-proxy.log'),
    );
    processes.push(kubeProxy);

    await waitForReadyNode(cp.kubeconfigPath, deadline, kubelet);
    await waitForHealthz('kube-proxy', proxyPorts.healthz, deadline, kubeProxy);
    log(`node ${nodeName} Ready in ${((performance.now() - started) / 1000).toFixed(1)} s (${cp.server})`);
    return {
      ...cp,
      dir,
      nodeName,
      network,
      containerdSocket: socket,
      importImage: (archivePath) => importImage(archivePath, { address: socket }),
      registry: registry.host,
      restartKubelet: async () => {
        await kubelet.restart('SIGTERM');
        await waitForHealthz('kubelet', settings.healthzPort, Date.now() + 60_000, kubelet);
      },
      blackHoleApiServer: (podIp) => blackHoleApiServer(podIp, Number(new URL(cp.server).port)),
      resetApiServerConnections: (podIp) =>
        resetApiServerConnections(podIp, network.hostAddress, Number(new URL(cp.server).port)),
      lowerMemoryLimit: (containerId, headroomBytes) =>
        lowerMemoryLimit(cgroupRoot, containerId, headroomBytes),
      stop,
    };
  } catch (error) {
    await stop().catch((stopError: unknown) => {
      log(`stopping the half-started node failed: ${String(stopError)}`);
    });
    throw error;
  }
}
