import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The Go module that pins the control-plane versions (go.mod is the single source of truth). */
export const controlPlaneModuleDir = fileURLToPath(new URL('../../controlplane/', import.meta.url));

export const binaryNames = [
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
export type BinaryName = (typeof binaryNames)[number];
export type ControlPlaneBinaries = Record<BinaryName, string>;

export interface PinnedVersions {
  kubernetes: string;
  etcd: string;
}

/** Reads the pinned Kubernetes and etcd versions from the harness's go.mod. */
export async function pinnedVersions(): Promise<PinnedVersions> {
  const goMod = await readFile(join(controlPlaneModuleDir, 'go.mod'), 'utf8');
  const version = (module: string): string => {
    const match = new RegExp(`^\\s*${module.replaceAll('.', '\\.')} (v\\S+)`, 'm').exec(goMod);
    if (!match?.[1]) throw new Error(`go.mod in ${controlPlaneModuleDir} does not pin ${module}`);
    return match[1];
  };
  return { kubernetes: version('k8s.io/kubernetes'), etcd: version('go.etcd.io/etcd/server/v3') };
}

/** Where built binaries are cached: outside the repo, shared by every checkout on this machine. */
export function cacheRoot(): string {
  const base =
    process.env.LOOPWRIGHT_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'loopwright');
  return join(base, 'controlplane');
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && (e.name.endsWith('.go') || e.name === 'go.mod' || e.name === 'go.sum'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * Stamps the release into the binaries as Kubernetes' own build does; without it the API server
 * reports v0.0.0-master and charts with a `kubeVersion` constraint refuse to install.
 */
function ldflags(versions: PinnedVersions): string {
  const [major = '', minor = ''] = versions.kubernetes.replace(/^v/, '').split('.');
  const pkg = 'k8s.io/component-base/version';
  return `-s -w -X ${pkg}.gitVersion=${versions.kubernetes} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}`;
}

/** Cache key: pinned versions plus a hash of everything that goes into the build, Go toolchain and flags included. */
async function cacheKey(versions: PinnedVersions): Promise<string> {
  const hash = createHash('sha256');
  const { stdout: goVersion } = await run('go', ['env', 'GOVERSION']);
  hash.update(goVersion);
  hash.update(ldflags(versions));
  for (const file of await sourceFiles(controlPlaneModuleDir)) {
    hash.update(relative(controlPlaneModuleDir, file));
    hash.update(await readFile(file));
  }
  return `k8s-${versions.kubernetes}-etcd-${versions.etcd}-${hash.digest('hex').slice(0, 12)}`;
}

function binariesIn(dir: string): ControlPlaneBinaries {
  return Object.fromEntries(binaryNames.map((name) => [name, join(dir, name)])) as ControlPlaneBinaries;
}

export interface EnsureOptions {
  /** Receives progress lines (the build takes minutes the first time). */
  log?: (line: string) => void;
}

/**
 * Returns the paths of the pinned etcd and Kubernetes binaries (control plane and node), building them with
 * the Go toolchain on first use. Builds land in a temporary directory and are renamed into place, so
 * concurrent callers (parallel test runs) never see a half-written binary.
 */
export async function ensureControlPlaneBinaries(options: EnsureOptions = {}): Promise<ControlPlaneBinaries> {
  const log = options.log ?? (() => undefined);
  const versions = await pinnedVersions();
  const target = join(cacheRoot(), await cacheKey(versions));
  const binaries = binariesIn(target);
  if (binaryNames.every((name) => existsSync(binaries[name]))) return binaries;

  await mkdir(cacheRoot(), { recursive: true });
  const staging = await mkdtemp(join(cacheRoot(), '.build-'));
  const started = performance.now();
  log(
    `building Kubernetes ${versions.kubernetes} (${binaryNames.filter((name) => name !== 'etcd').join(', ')}) and etcd ${versions.etcd} (first use on this machine)`,
  );
  try {
    await run(
      'go',
      ['build', '-trimpath', `-ldflags=${ldflags(versions)}`, '-o', staging + '/', './cmd/...'],
      {
        cwd: controlPlaneModuleDir,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, CGO_ENABLED: '0' },
      },
    );
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`building the control-plane binaries failed:\n${stderr.slice(-4000)}`, { cause: error });
  }
  try {
    await rename(staging, target);
  } catch (error) {
    // Another process finished the same build first; its binaries are identical.
    await rm(staging, { recursive: true, force: true });
    if (!binaryNames.every((name) => existsSync(binaries[name]))) throw error;
  }
  log(`control-plane build took ${((performance.now() - started) / 1000).toFixed(1)} s -> ${target}`);
  return binaries;
}
