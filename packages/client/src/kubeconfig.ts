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
 * not apply, so a misconfigured Deployment fails at start with a message that says what to fix. So does
 * a source that applies but cannot be used: a file that does not load, a context that is missing or
 * unusable (see `selectContext`); the error's `input` says which input to fix.
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

/**
 * The input of {@link loadKubeConfig} that a {@link KubeConfigError} is about, so that the caller can name
 * the option that set it: `kubeconfig`, where the files are (the explicit path, `KUBECONFIG`, or the
 * defaults) and what they hold, the current-context's entries included; `context`, the context asked
 * for and its entries, or the lack of one where the files set no current-context.
 */
export type KubeConfigInput = 'kubeconfig' | 'context';

/**
 * No usable Kubernetes configuration. The message says what is wrong with `input` without naming it
 * (the caller knows whether a flag or a variable set it), and never holds a credential.
 */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
  readonly input: KubeConfigInput;
  /** When no source applied: each source, and why it did not apply. */
  readonly tried: string[];
  constructor(input: KubeConfigInput, message: string, tried: string[] = []) {
    super(message);
    this.input = input;
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
    if (!existsSync(path)) throw new KubeConfigError('kubeconfig', `"${path}" does not exist`);
    loaded = { kc: loadFiles([path]), source: { kind: 'flag', paths: [path] } };
  } else {
    tried.push('--kubeconfig (not given)');
  }

  if (!loaded) {
    const list = (env.KUBECONFIG ?? '').split(delimiter).filter((entry) => entry.length > 0);
    if (list.length > 0) {
      const existing = list.filter((path) => existsSync(path));
      if (existing.length === 0)
        throw new KubeConfigError('kubeconfig', `none of its files exist ("${list.join(delimiter)}")`);
      loaded = { kc: loadFiles(existing), source: { kind: 'KUBECONFIG', paths: existing } };
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
      loaded = { kc: loadFiles([path]), source: { kind: 'home', paths: [path] } };
    } else {
      tried.push(`${path} (does not exist)`);
    }
  }

  if (!loaded) {
    throw new KubeConfigError(
      'kubeconfig',
      `no Kubernetes configuration found; tried: ${tried.join('; ')}`,
      tried,
    );
  }
  const { kc, source } = loaded;
  selectContext(kc, source, options.context);
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
function loadFiles(paths: string[]): KubeConfig {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext: string | undefined;
  for (const path of paths) {
    const file = new KubeConfig();
    try {
      file.loadFromFile(path);
    } catch (error) {
      throw new KubeConfigError('kubeconfig', `cannot load "${path}": ${loadProblem(error)}`);
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

/**
 * Why a file did not load. js-yaml's message quotes the lines around the mistake, which may hold a token:
 * only its reason and position are kept.
 */
function loadProblem(error: unknown): string {
  if (error instanceof Error && 'reason' in error && 'mark' in error) {
    const mark = error.mark as { line: number; column: number };
    return `${String(error.reason)} at line ${mark.line + 1}, column ${mark.column + 1}`;
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code ?? (error instanceof Error ? error.message : String(error));
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

/**
 * Makes `requested` (else the files' current-context) current, and checks what client-go's
 * `ConfirmUsable` and `validateContext` check of it: it exists, its cluster and user are defined, its
 * namespace is a DNS-1123 label, the cluster's server is an http(s) URL (a proxy-url an http(s) or
 * socks5 one), and the files it names (CA, client certificate and key) can be read; otherwise the first
 * request would fail, and every one after it, as if the API server were down (a server that is no URL
 * would throw in the transport's constructor). A problem of the context asked for is the `context` input's; one of
 * the files' own current-context is the `kubeconfig` input's.
 */
function selectContext(kc: KubeConfig, source: KubeConfigSource, requested: string | undefined): void {
  const files = source.kind === 'in-cluster' ? 'the in-cluster configuration' : quotedPaths(source);
  const names = kc.getContexts().map((context) => context.name);
  const available = names.length === 0 ? 'it has none' : names.join(', ');
  if (requested !== undefined) {
    if (!kc.getContextObject(requested))
      throw new KubeConfigError(
        'context',
        `expected a context of ${describeSource(source)} (${available}), got "${requested}"`,
      );
    kc.setCurrentContext(requested);
  }
  const input: KubeConfigInput = requested === undefined ? 'kubeconfig' : 'context';
  const where = input === 'context' ? describeSource(source) : files;
  const current = kc.getCurrentContext() as string | undefined;
  if (!current)
    throw new KubeConfigError('context', `required: ${files} sets no current-context (${available})`);
  const context = kc.getContextObject(current);
  // Only the files' own current-context can be missing here: a requested one was found above.
  if (!context)
    throw new KubeConfigError(
      'kubeconfig',
      `${files}: current-context "${current}" is not one of its contexts (${available})`,
    );
  const problem = contextProblem(kc, context);
  if (problem !== undefined) throw new KubeConfigError(input, `${where}: context "${current}" ${problem}`);
}

/** What makes a context unusable, or undefined. */
function contextProblem(kc: KubeConfig, context: Context): string | undefined {
  const cluster = kc.getCluster(context.cluster);
  if (!cluster) return `names cluster "${context.cluster}", which is not defined`;
  // client-node lets a context name no user (no credentials; its type says otherwise); one it names
  // must exist.
  const userName = context.user as string | undefined;
  const user = kc.getUser(context.user);
  if (userName !== undefined && !user) return `names user "${userName}", which is not defined`;
  if (context.namespace !== undefined && !DNS_LABEL.test(context.namespace))
    return `has namespace "${context.namespace}", which is not a DNS-1123 label`;
  // Every cluster has a server: client-node refuses to load one without.
  if (!isUrl(cluster.server, ['http:', 'https:']))
    return `names cluster "${cluster.name}", whose server "${cluster.server}" is not an http(s) URL`;
  // A proxy URL may hold a password: it is not quoted.
  if (cluster.proxyUrl && !isUrl(cluster.proxyUrl, ['http:', 'https:', 'socks5:']))
    return `names cluster "${cluster.name}", whose proxy-url is not an http(s) or socks5 URL`;
  const unreadable = [
    { owner: `cluster "${cluster.name}"`, field: 'certificate-authority', path: cluster.caFile },
    ...(user
      ? [
          { owner: `user "${user.name}"`, field: 'client-certificate', path: user.certFile },
          { owner: `user "${user.name}"`, field: 'client-key', path: user.keyFile },
        ]
      : []),
  ].flatMap(({ owner, field, path }) => {
    const code = path ? unreadableCode(path) : undefined;
    return code === undefined ? [] : [`names ${owner}, whose ${field} "${path}" cannot be read: ${code}`];
  });
  return unreadable[0];
}

const DNS_LABEL = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function isUrl(text: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

function unreadableCode(path: string): string | undefined {
  try {
    readFileSync(path);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

function quotedPaths(source: KubeConfigSource): string {
  return `"${source.paths.join(delimiter)}"`;
}

/** Where the configuration came from, as the user chose it: `--kubeconfig "/path"`, `KUBECONFIG "/a:/b"`. */
function describeSource(source: KubeConfigSource): string {
  switch (source.kind) {
    case 'flag':
      return `--kubeconfig ${quotedPaths(source)}`;
    case 'KUBECONFIG':
      return `KUBECONFIG ${quotedPaths(source)}`;
    case 'in-cluster':
      return 'the in-cluster configuration';
    case 'home':
      return quotedPaths(source);
  }
}
