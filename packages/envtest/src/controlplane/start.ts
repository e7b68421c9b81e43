import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { ensureControlPlaneBinaries, type ControlPlaneBinaries } from './binaries.ts';
import { freeLoopbackPort } from './ports.ts';
import { ManagedProcess } from './process.ts';

/** A running control plane. `stop()` is idempotent and leaves no process or temp file behind. */
export interface ControlPlane {
  /** Path of an admin kubeconfig (static token in group system:masters, CA-verified HTTPS). */
  kubeconfigPath: string;
  /** The API server URL, e.g. https://127.0.0.1:41234. */
  server: string;
  /** The admin bearer token in the kubeconfig. */
  adminToken: string;
  /** PEM file of the CA that signed the API server's serving certificate. */
  caPath: string;
  /** Directory holding certificates, keys, data and the processes' logs. */
  dir: string;
  /** Bearer tokens of the `users` asked for in the options, by user name. */
  tokens: Record<string, string>;
  /**
   * Fault hook: kills kube-apiserver with `signal` (SIGKILL: a crash) and starts it again with the same
   * flags; resolves once its /readyz answers 200. Every client's connections and watches break.
   */
  restartApiServer(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /**
   * Fault hook: compacts etcd's history up to its current revision (what kube-apiserver does every
   * 5 min), so a watch that must resume from an older resourceVersion without the API server's watch
   * cache gets 410 Gone. Returns that revision.
   */
  compactEtcd(): Promise<number>;
  stop(): Promise<void>;
}

/** A user authenticated by a static bearer token, e.g. a kubelet as `system:node:<name>`. */
export interface StaticUser {
  name: string;
  groups: string[];
}

/**
 * What a node needs from the control plane: an API server that pods reach through the `kubernetes`
 * Service, the Node authorizer, and a client certificate to call the kubelet with (logs, exec).
 */
export interface NodeAccess {
  /** The address to serve and advertise on (the node bridge's); it becomes the Service's endpoint. */
  address: string;
  kubeletClientCertFile: string;
  kubeletClientKeyFile: string;
}

export interface ControlPlaneOptions {
  /** Directory to put state in; default: a fresh temporary directory, removed on stop. */
  dir?: string;
  /** kube-controller-manager controllers; default: garbage collector, namespace, service account. */
  controllers?: string[];
  /** Keep the state directory after stop (for debugging); default: LOOPWRIGHT_KEEP_CONTROLPLANE=1. */
  keepDir?: boolean;
  log?: (line: string) => void;
  /** How long to wait for each component to become healthy. */
  startTimeoutMs?: number;
  /** Extra users with static tokens (returned in `tokens`). */
  users?: StaticUser[];
  /** Serve a node (see NodeAccess); default: loopback only, no `kubernetes` Service endpoint. */
  node?: NodeAccess;
  /**
   * Run once the API server is up and before kube-controller-manager starts, with the admin kubeconfig:
   * for what the controllers must find from their start, as in a cluster that has had it for long. A
   * CRD applied here is watched by the garbage collector from its first discovery; applied later, it is
   * picked up at the collector's next resync (every 30 s), which then lists its objects and looks up the
   * owners it has not seen, in the middle of whatever runs then.
   */
  beforeControllerManager?: (kubeconfigPath: string) => Promise<void>;
  /** Extra kube-apiserver flags, e.g. `--feature-gates=WatchList=false` to test a client's fallback. */
  apiServerFlags?: string[];
}

const defaultControllers = [
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
];

/** GET a URL and report the status code; undefined while the server does not answer yet. */
async function probe(url: string, token?: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const isHttps = url.startsWith('https:');
    const req = (isHttps ? httpsRequest : httpRequest)(
      url,
      {
        method: 'GET',
        timeout: 2000,
        // Readiness only: the kubeconfig written afterwards verifies the server with its CA.
        ...(isHttps ? { rejectUnauthorized: false } : {}),
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        res.resume();
        resolve(res.statusCode);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => {
      resolve(undefined);
    });
    req.end();
  });
}

async function waitHealthy(
  process: ManagedProcess,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (process.exited) throw new Error(`${process.name} exited during start-up:\n${await process.tail()}`);
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`${process.name} not healthy after ${timeoutMs} ms:\n${await process.tail()}`);
}

/** A kubeconfig for one bearer token, verifying the server with the given CA. */
export function kubeconfigYaml(server: string, caPem: string, token: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'loopwright',
        cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') },
      },
    ],
    users: [{ name: 'admin', user: { token } }],
    contexts: [
      { name: 'loopwright', context: { cluster: 'loopwright', user: 'admin', namespace: 'default' } },
    ],
    'current-context': 'loopwright',
  });
}

async function startEtcd(
  bin: ControlPlaneBinaries,
  dir: string,
  timeoutMs: number,
): Promise<{ etcd: ManagedProcess; url: string }> {
  const [clientPort, peerPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const etcd = new ManagedProcess(
    'etcd',
    bin.etcd,
    [
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      // Test data is disposable: skipping fsync makes every write much cheaper.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    join(dir, 'etcd.log'),
  );
  await waitHealthy(etcd, async () => (await probe(`${url}/health`)) === 200, timeoutMs);
  return { etcd, url };
}

/** The flags that differ between a loopback-only control plane and one serving a node. */
function addressingArgs(node: NodeAccess | undefined): string[] {
  if (!node)
    return [
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      '--authorization-mode=RBAC',
      '--enable-admission-plugins=OwnerReferencesPermissionEnforcement',
      // The default reconciler publishes the advertise address as an Endpoint, and loopback is invalid there.
      '--endpoint-reconciler-type=none',
    ];
  return [
    `--bind-address=${node.address}`,
    `--advertise-address=${node.address}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction,OwnerReferencesPermissionEnforcement',
    // Logs and exec reach the kubelet by the Node's InternalIP; any other type would make the API server
    // resolve the node name through the machine's resolver, off the machine.
    '--kubelet-preferred-address-types=InternalIP',
    `--kubelet-client-certificate=${node.kubeletClientCertFile}`,
    `--kubelet-client-key=${node.kubeletClientKeyFile}`,
  ];
}

const apiServerReady = (server: string, adminToken: string) => async () =>
  (await probe(`${server}/readyz`, adminToken)) === 200;

/** etcd's v3 JSON gateway (keys and values base64): the current revision, then a compaction up to it. */
async function compactEtcdHistory(etcdUrl: string): Promise<number> {
  const post = async (path: string, body: object): Promise<{ header?: { revision?: string } }> => {
    const response = await fetch(`${etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as { header?: { revision?: string } };
  };
  const { header } = await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 });
  const revision = Number(header?.revision);
  if (!Number.isInteger(revision)) throw new Error(`etcd reported no revision: ${JSON.stringify(header)}`);
  await post('/v3/kv/compaction', { revision: String(revision), physical: true });
  return revision;
}

async function startApiServer(
  bin: ControlPlaneBinaries,
  dir: string,
  etcdUrl: string,
  adminToken: string,
  timeoutMs: number,
  node: NodeAccess | undefined,
  extraFlags: string[],
): Promise<{ apiserver: ManagedProcess; server: string; caPem: string }> {
  const port = await freeLoopbackPort();
  const server = `https://${node?.address ?? '127.0.0.1'}:${port}`;
  const certDir = join(dir, 'pki');
  const apiserver = new ManagedProcess(
    'kube-apiserver',
    bin['kube-apiserver'],
    [
      `--etcd-servers=${etcdUrl}`,
      // Hardened clusters (OpenShift among them) run OwnerReferencesPermissionEnforcement: an
      // ownerReference with blockOwnerDeletion then needs update on the owner's finalizers, so the e2e
      // suites prove the charts' RBAC covers that.
      ...addressingArgs(node),
      `--secure-port=${port}`,
      `--cert-dir=${certDir}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--api-audiences=https://kubernetes.default.svc.cluster.local',
      '--v=1',
      ...extraFlags,
    ],
    join(dir, 'kube-apiserver.log'),
  );
  await waitHealthy(apiserver, apiServerReady(server, adminToken), timeoutMs);
  // The self-signed serving certificate is written to cert-dir at start-up, CA included.
  const caPem = await readFile(join(certDir, 'apiserver.crt'), 'utf8');
  return { apiserver, server, caPem };
}

/**
 * Starts etcd, kube-apiserver (RBAC, TokenRequest) and kube-controller-manager on loopback with random
 * free ports, and writes an admin kubeconfig. Use one per test run (see global-setup.ts).
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? (() => undefined);
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const keepDir = options.keepDir ?? process.env.LOOPWRIGHT_KEEP_CONTROLPLANE === '1';
  const bin = await ensureControlPlaneBinaries({ log });
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'loopwright-cp-')));
  await mkdir(dir, { recursive: true });

  const adminToken = randomBytes(24).toString('hex');
  const tokens: Record<string, string> = {};
  for (const user of options.users ?? []) tokens[user.name] = randomBytes(24).toString('hex');
  const tokenLines = [
    `${adminToken},loopwright-admin,loopwright-admin,system:masters`,
    ...(options.users ?? []).map(
      (user) => `${tokens[user.name]},${user.name},${user.name},"${user.groups.join(',')}"`,
    ),
  ];
  await writeFile(join(dir, 'tokens.csv'), tokenLines.map((line) => `${line}\n`).join(''), { mode: 0o600 });
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  await writeFile(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));

  const processes: ManagedProcess[] = [];
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // Reverse start order: controllers first, etcd last, so nothing logs errors about a vanished peer.
    for (const p of [...processes].reverse()) await p.stop();
    if (!keepDir && !options.dir) await rm(dir, { recursive: true, force: true });
  };

  try {
    const { etcd, url: etcdUrl } = await startEtcd(bin, dir, timeoutMs);
    processes.push(etcd);
    const { apiserver, server, caPem } = await startApiServer(
      bin,
      dir,
      etcdUrl,
      adminToken,
      timeoutMs,
      options.node,
      options.apiServerFlags ?? [],
    );
    processes.push(apiserver);
    const kubeconfigPath = join(dir, 'kubeconfig');
    await writeFile(kubeconfigPath, kubeconfigYaml(server, caPem, adminToken), { mode: 0o600 });
    await options.beforeControllerManager?.(kubeconfigPath);

    const controllerManager = new ManagedProcess(
      'kube-controller-manager',
      bin['kube-controller-manager'],
      [
        `--kubeconfig=${kubeconfigPath}`,
        `--controllers=${(options.controllers ?? defaultControllers).join(',')}`,
        `--service-account-private-key-file=${join(dir, 'sa.key')}`,
        `--root-ca-file=${join(dir, 'pki', 'apiserver.crt')}`,
        '--leader-elect=false',
        // Serve nothing: no port to allocate, and the harness needs no KCM endpoint.
        '--secure-port=0',
        '--v=1',
      ],
      join(dir, 'kube-controller-manager.log'),
    );
    processes.push(controllerManager);
    // The controller manager has no endpoint now; give it a moment and make sure it did not die.
    await sleep(200);
    if (controllerManager.exited)
      throw new Error(`kube-controller-manager exited:\n${await controllerManager.tail()}`);
    log(`control plane up: ${server} (kubeconfig ${kubeconfigPath})`);
    return {
      kubeconfigPath,
      server,
      adminToken,
      caPath: join(dir, 'pki', 'apiserver.crt'),
      dir,
      tokens,
      restartApiServer: async (signal) => {
        await apiserver.restart(signal);
        await waitHealthy(apiserver, apiServerReady(server, adminToken), timeoutMs);
      },
      compactEtcd: () => compactEtcdHistory(etcdUrl),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
