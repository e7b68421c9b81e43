/**
 * Finding the cluster to talk to, with controller-runtime's precedence (`ctrl.GetConfig()`):
 *
 * 1. an explicit path (the `--kubeconfig` flag): only that file, an error if it cannot be loaded;
 * 2. the `KUBECONFIG` environment variable: a list of files separated by `:` (`;` on Windows), merged
 *    as clientcmd merges them: the first file that sets `current-context` wins, the first definition of
 *    a named cluster/user/context wins, files that do not exist are skipped;
 * 3. in-cluster: when `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` are set and the
 *    service-account token exists (a Pod), the API server from those variables with the mounted CA,
 *    token (re-read as the kubelet rotates it) and namespace;
 * 4. `$HOME/.kube/config`.
 *
 * Unlike client-node's `loadFromDefault()`, nothing silently falls back to `http://localhost:8080`:
 * when no source applies, {@link KubeConfigError} lists every source that was tried and why it did
 * not apply, so a misconfigured Deployment fails at start with a message that says what to fix.
 */
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export interface LoadKubeConfigOptions {
  /** Explicit kubeconfig path (the `--kubeconfig` flag). Wins over everything else. */
  kubeconfig?: string;
  /** Context to use instead of the file's `current-context` (the `--context` flag). */
  context?: string;
  /** Environment to read `KUBECONFIG`, `KUBERNETES_SERVICE_*` and `HOME` from. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Where the service-account files are mounted. Default `/var/run/secrets/kubernetes.io/serviceaccount`. */
  serviceAccountDir?: string;
}

/** Which source {@link loadKubeConfig} used. */
export type KubeConfigSource =
  | { kind: 'flag'; paths: string[] }
  | { kind: 'KUBECONFIG'; paths: string[] }
  | { kind: 'in-cluster'; paths: string[] }
  | { kind: 'home'; paths: string[] };

/** No usable Kubernetes configuration; `tried` lists each source and why it did not apply. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
  readonly tried: string[];
  constructor(message: string, tried: string[], options?: { cause?: unknown }) {
    super(message, options);
    this.tried = tried;
  }
}

const defaultServiceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';
const sources = new WeakMap<KubeConfig, KubeConfigSource>();

/** Loads the cluster configuration (see the module comment for the precedence). Throws {@link KubeConfigError}. */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const tried: string[] = [];
  let loaded: { kc: KubeConfig; source: KubeConfigSource } | undefined;

  if (options.kubeconfig) {
    const path = options.kubeconfig;
    if (!existsSync(path)) {
      throw new KubeConfigError(`--kubeconfig ${path} does not exist`, [
        `--kubeconfig ${path} (does not exist)`,
      ]);
    }
    loaded = { kc: loadFiles([path], `--kubeconfig ${path}`), source: { kind: 'flag', paths: [path] } };
  } else {
    tried.push('--kubeconfig (not given)');
  }

  if (!loaded) {
    const list = (env.KUBECONFIG ?? '').split(delimiter).filter((entry) => entry.length > 0);
    if (list.length > 0) {
      const existing = list.filter((path) => existsSync(path));
      if (existing.length === 0) {
        throw new KubeConfigError(`KUBECONFIG=${env.KUBECONFIG ?? ''}: none of its files exist`, [
          ...tried,
          `KUBECONFIG=${env.KUBECONFIG ?? ''} (no such file)`,
        ]);
      }
      loaded = {
        kc: loadFiles(existing, `KUBECONFIG=${env.KUBECONFIG ?? ''}`),
        source: { kind: 'KUBECONFIG', paths: existing },
      };
    } else {
      tried.push('KUBECONFIG (not set)');
    }
  }

  if (!loaded) {
    const host = env.KUBERNETES_SERVICE_HOST;
    const port = env.KUBERNETES_SERVICE_PORT;
    const dir = options.serviceAccountDir ?? defaultServiceAccountDir;
    const tokenPath = join(dir, 'token');
    if (!host || !port) {
      tried.push('in-cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT not set)');
    } else if (!existsSync(tokenPath)) {
      tried.push(`in-cluster (${tokenPath} does not exist)`);
    } else {
      loaded = { kc: loadInCluster(host, port, dir), source: { kind: 'in-cluster', paths: [dir] } };
    }
  }

  if (!loaded) {
    const home = env.HOME ?? homedir();
    const path = join(home, '.kube', 'config');
    if (existsSync(path)) {
      loaded = { kc: loadFiles([path], path), source: { kind: 'home', paths: [path] } };
    } else {
      tried.push(`${path} (does not exist)`);
    }
  }

  if (!loaded) {
    throw new KubeConfigError(`no Kubernetes configuration found; tried: ${tried.join('; ')}`, tried);
  }
  const { kc, source } = loaded;
  const where =
    source.kind === 'flag'
      ? `--kubeconfig ${source.paths.join(',')}`
      : `${source.kind} ${source.paths.join(delimiter)}`;
  if (options.context !== undefined) {
    if (!kc.getContextObject(options.context)) {
      throw new KubeConfigError(`context "${options.context}" not found in ${where}`, [where]);
    }
    kc.setCurrentContext(options.context);
  }
  validate(kc, where);
  sources.set(kc, source);
  return kc;
}

/** What a start-up log line should say about the target cluster. No credentials. */
export interface KubeContextDescription {
  context: string;
  cluster: string;
  server: string;
  user: string;
  /** The context's namespace, `default` when it sets none (in-cluster: the Pod's namespace). */
  namespace: string;
  /** Where {@link loadKubeConfig} found the configuration; undefined for a KubeConfig loaded elsewhere. */
  source?: KubeConfigSource;
}

export function describeContext(kc: KubeConfig): KubeContextDescription {
  const context = kc.getContextObject(kc.getCurrentContext());
  const cluster = kc.getCurrentCluster();
  const description: KubeContextDescription = {
    context: kc.getCurrentContext(),
    cluster: cluster?.name ?? '',
    server: cluster?.server ?? '',
    user: kc.getCurrentUser()?.name ?? '',
    namespace: context?.namespace?.trim() || 'default',
  };
  const source = sources.get(kc);
  if (source) description.source = source;
  return description;
}

/** Loads and merges kubeconfig files with clientcmd's first-wins rule. */
function loadFiles(paths: string[], what: string): KubeConfig {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext: string | undefined;
  for (const path of paths) {
    const file = new KubeConfig();
    try {
      file.loadFromFile(path);
    } catch (error) {
      throw new KubeConfigError(`${what}: cannot load ${path}: ${(error as Error).message}`, [what], {
        cause: error,
      });
    }
    for (const cluster of file.getClusters())
      if (!clusters.has(cluster.name)) clusters.set(cluster.name, cluster);
    for (const user of file.getUsers()) if (!users.has(user.name)) users.set(user.name, user);
    for (const context of file.getContexts())
      if (!contexts.has(context.name)) contexts.set(context.name, context);
    const current = file.getCurrentContext() as string | undefined;
    if (!currentContext && current) currentContext = current;
  }
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext,
  });
  return kc;
}

function loadInCluster(host: string, port: string, dir: string): KubeConfig {
  const kc = new KubeConfig();
  // client-node's loadFromCluster reads the host/port from process.env and the files from a fixed path
  // (with an optional prefix); build the same configuration from our inputs so `env` and
  // `serviceAccountDir` are honoured. The token is a file-backed auth provider: re-read on rotation.
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const namespacePath = join(dir, 'namespace');
  const namespace = existsSync(namespacePath) ? readFileSync(namespacePath, 'utf8').trim() : '';
  const context: Context = {
    name: 'inClusterContext',
    cluster: 'inCluster',
    user: 'inClusterUser',
    ...(namespace ? { namespace } : {}),
  };
  kc.loadFromOptions({
    clusters: [{ name: 'inCluster', server, caFile: join(dir, 'ca.crt'), skipTLSVerify: false }],
    users: [
      {
        name: 'inClusterUser',
        authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } },
      },
    ],
    contexts: [context],
    currentContext: 'inClusterContext',
  });
  return kc;
}

function validate(kc: KubeConfig, where: string): void {
  const current = kc.getCurrentContext() as string | undefined;
  if (!current) throw new KubeConfigError(`${where}: no current-context set (pass a context)`, [where]);
  const context = kc.getContextObject(current);
  if (!context) throw new KubeConfigError(`${where}: current-context "${current}" is not defined`, [where]);
  const cluster = kc.getCluster(context.cluster);
  if (!cluster)
    throw new KubeConfigError(
      `${where}: context "${current}" names cluster "${context.cluster}", which is not defined`,
      [where],
    );
  if (!cluster.server)
    throw new KubeConfigError(`${where}: cluster "${cluster.name}" has no server`, [where]);
}
