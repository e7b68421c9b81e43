import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureGoBuild } from '../cached-go-build.ts';

/** The Go module that pins the control-plane versions (go.mod is the single source of truth). */
const controlPlaneModuleDir = fileURLToPath(new URL('../../controlplane/', import.meta.url));

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

/**
 * Stamps the release into the binaries as Kubernetes' own build does; without it the API server
 * reports v0.0.0-master and charts with a `kubeVersion` constraint refuse to install.
 */
function ldflags(versions: PinnedVersions): string {
  const [major = '', minor = ''] = versions.kubernetes.replace(/^v/, '').split('.');
  const pkg = 'k8s.io/component-base/version';
  return `-s -w -X ${pkg}.gitVersion=${versions.kubernetes} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}`;
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
  const versions = await pinnedVersions();
  const kubernetesBinaries = binaryNames.filter((name) => name !== 'etcd').join(', ');
  const dir = await ensureGoBuild(
    {
      what: `Kubernetes ${versions.kubernetes} (${kubernetesBinaries}) and etcd ${versions.etcd}`,
      moduleDir: controlPlaneModuleDir,
      cacheName: 'controlplane',
      settings: ldflags(versions),
      goBuildArgs: (outDir) => [
        'build',
        '-trimpath',
        `-ldflags=${ldflags(versions)}`,
        '-o',
        outDir + '/',
        './cmd/...',
      ],
      binaries: binaryNames,
      entryName: (digest) => `k8s-${versions.kubernetes}-etcd-${versions.etcd}-${digest.slice(0, 12)}`,
    },
    options.log,
  );
  return binariesIn(dir);
}
