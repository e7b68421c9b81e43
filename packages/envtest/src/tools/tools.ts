/**
 * Every Go program the tests run, from one Go module (packages/envtest/tools): the Kubernetes control
 * plane and node, etcd, kubectl, helm, Prometheus, the Cluster API core manager and Mailgun's mock. One
 * `go build` compiles them together, so the libraries they share (client-go, apimachinery, grpc,
 * otel...) are compiled once: built apart, helm, Prometheus and Cluster API compiled their own copies,
 * and set-up took more than half as long again.
 */
import { execFile } from 'node:child_process';
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureGoBuild, sharedUntilFailure, type GoBuildProgress } from '../cached-go-build.ts';

const run = promisify(execFile);

/** The Go module that pins them all; its go.mod is the single source of truth for every version. */
const toolsModuleDir = fileURLToPath(new URL('../../tools/', import.meta.url));

/** A control plane's and a node's programs: what `startControlPlane` and `startCluster` run. */
export const clusterToolNames = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  // A node's: the scheduler binds pods to it, the kubelet runs them, kube-proxy serves Services, and
  // pause is the pod sandbox's process.
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
  'pause',
] as const;

/** The programs, by the name of their file in the build's directory. */
export const toolNames = [
  ...clusterToolNames,
  'kubectl',
  'helm',
  'prometheus',
  'cluster-api-manager',
  // Cluster API's own CLI: `clusterctl init` installs mailgun-cluster from a release's provider files.
  'clusterctl',
  'mailgun-mock',
] as const;
export type ToolName = (typeof toolNames)[number];
export type TestTools = Record<ToolName, string>;

const modules = {
  kubernetes: 'k8s.io/kubernetes',
  etcd: 'go.etcd.io/etcd/server/v3',
  helm: 'helm.sh/helm/v4',
  prometheus: 'github.com/prometheus/prometheus',
  clusterApi: 'sigs.k8s.io/cluster-api',
} as const;

/** The versions the module pins, and where the modules whose files the tests read are. */
export interface PinnedTools {
  kubernetes: string;
  etcd: string;
  helm: string;
  /** Prometheus's Go module (`v0.3XY.Z` for release 3.XY.Z) and its release, from the module's VERSION. */
  prometheus: { module: string; release: string };
  /** Cluster API's version and its module's files in Go's module cache (read-only): CRDs, webhooks. */
  clusterApi: { version: string; moduleDir: string };
}

/**
 * Reads the pinned versions (`go mod download -json`: the modules whose files are read are fetched into
 * Go's module cache if they are not there yet; the build needs them anyway).
 */
export const pinnedTools = sharedUntilFailure(async (): Promise<PinnedTools> => {
  const { stdout } = await run('go', ['mod', 'download', '-json', ...Object.values(modules)], {
    cwd: toolsModuleDir,
    maxBuffer: 16 * 1024 * 1024,
  });
  // One JSON object per module, concatenated.
  const found = new Map<string, { Version?: string; Dir?: string; Error?: string }>();
  for (const text of stdout.split(/(?<=^\})\n/m).filter((part) => part.trim())) {
    const download = JSON.parse(text) as { Path: string; Version?: string; Dir?: string; Error?: string };
    found.set(download.Path, download);
  }
  const of = (module: string): { version: string; dir: string } => {
    const download = found.get(module);
    if (!download?.Version || !download.Dir)
      throw new Error(
        `go.mod in ${toolsModuleDir} does not pin ${module}: ${download?.Error ?? 'not listed'}`,
      );
    return { version: download.Version, dir: download.Dir };
  };
  const prometheus = of(modules.prometheus);
  const clusterApi = of(modules.clusterApi);
  return {
    kubernetes: of(modules.kubernetes).version,
    etcd: of(modules.etcd).version,
    helm: of(modules.helm).version,
    prometheus: {
      module: prometheus.version,
      release: (await readFile(join(prometheus.dir, 'VERSION'), 'utf8')).trim(),
    },
    clusterApi: { version: clusterApi.version, moduleDir: clusterApi.dir },
  };
});

/**
 * The build tags: Prometheus keeps only its Kubernetes service discoverer (plugins/plugin_*.go in its
 * module; Debian's package is built without it). Read from the module's `build-tags` file, which
 * scripts/setup.sh also reads to download exactly the modules the build needs.
 */
async function buildTags(): Promise<string> {
  return (await readFile(join(toolsModuleDir, 'build-tags'), 'utf8')).trim();
}

/**
 * The version stamps each program's own release build sets, so each reports its release: Kubernetes'
 * (component-base; helm, kubectl and Cluster API link it too, and get the Kubernetes libraries' release
 * instead of v0.0.0), helm's (a plain build reports only "v4.2"), Prometheus's (.promu.yml: the module
 * version stands in for the git revision, which the module proxy does not carry) and Cluster API's
 * (hack/scripts/release/version.sh). No build user or date: the binaries depend on their inputs only,
 * as the cache key does.
 */
function ldflags(pinned: PinnedTools): string {
  const release = (version: string) => version.replace(/^v/, '').split('.');
  const [kubeMajor = '', kubeMinor = ''] = release(pinned.kubernetes);
  const [capiMajor = '', capiMinor = ''] = release(pinned.clusterApi.version);
  const stamps = {
    'k8s.io/component-base/version.gitVersion': pinned.kubernetes,
    'k8s.io/component-base/version.gitMajor': kubeMajor,
    'k8s.io/component-base/version.gitMinor': kubeMinor,
    'helm.sh/helm/v4/internal/version.version': pinned.helm,
    'helm.sh/helm/v4/internal/version.gitTreeState': 'clean',
    'github.com/prometheus/common/version.Version': pinned.prometheus.release,
    'github.com/prometheus/common/version.Revision': pinned.prometheus.module,
    'sigs.k8s.io/cluster-api/version.gitVersion': pinned.clusterApi.version,
    'sigs.k8s.io/cluster-api/version.gitMajor': capiMajor,
    'sigs.k8s.io/cluster-api/version.gitMinor': capiMinor,
    'sigs.k8s.io/cluster-api/version.gitTreeState': 'clean',
  };
  const x = Object.entries(stamps).map(([name, value]) => `-X ${name}=${value}`);
  return ['-s', '-w', ...x].join(' ');
}

export interface EnsureToolsOptions {
  /** Receives progress lines (the first build takes minutes). */
  log?: (line: string) => void;
  /** Receives the build's progress as it compiles (packages compiled of those the build needs). */
  onProgress?: (progress: GoBuildProgress) => void;
}

/**
 * Returns the path of every test tool, building them all with the Go toolchain on the first call on this
 * machine for these inputs (`pnpm controlplane build`, which scripts/setup.sh runs, does it up front).
 * Memoised per process.
 */
export const ensureTestTools = sharedUntilFailure(
  async (options: EnsureToolsOptions = {}): Promise<TestTools> => {
    const pinned = await pinnedTools();
    const tags = await buildTags();
    const flags = ['-trimpath', `-tags=${tags}`, `-ldflags=${ldflags(pinned)}`];
    // ./cmd/... are our thin mains; `tool` the upstream mains the go.mod names.
    const packages = ['./cmd/...', 'tool'];
    const dir = await ensureGoBuild(
      {
        what: 'the test tools',
        detail: `Kubernetes ${pinned.kubernetes} and kubectl, etcd ${pinned.etcd}, helm ${pinned.helm}, Prometheus ${pinned.prometheus.release}, Cluster API ${pinned.clusterApi.version} and clusterctl, Mailgun's mock`,
        moduleDir: toolsModuleDir,
        cacheName: 'tools',
        settings: flags.join(' '),
        goBuildArgs: (outDir) => ['build', ...flags, '-o', `${outDir}/`, ...packages],
        listArgs: ['list', '-deps', `-tags=${tags}`, ...packages],
        // Cluster API's main package is `core`; its image calls the program manager.
        finish: (outDir) => rename(join(outDir, 'core'), join(outDir, 'cluster-api-manager')),
        binaries: toolNames,
        entryName: (digest) => `k8s-${pinned.kubernetes}-${digest.slice(0, 12)}`,
      },
      options.log,
      options.onProgress,
    );
    return Object.fromEntries(toolNames.map((name) => [name, join(dir, name)])) as TestTools;
  },
);
