/**
 * The programs a release runs, from their own Go module (packages/cluster/release-tools): CNCF
 * distribution's registry, crane (pushes images), syft (SBOMs) and cosign (signatures, attestations).
 * A module apart from the test tools': syft and cosign pull Kubernetes libraries a minor version ahead of
 * the control plane's, and one module has one version of each library.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureGoBuild, sharedUntilFailure, type GoBuildProgress } from '@loopwright/envtest';

const run = promisify(execFile);

const releaseToolsModuleDir = fileURLToPath(new URL('../../release-tools/', import.meta.url));

export const releaseToolNames = ['registry', 'crane', 'syft', 'cosign'] as const;
export type ReleaseToolName = (typeof releaseToolNames)[number];
export type ReleaseTools = Record<ReleaseToolName, string>;

const modules = {
  registry: 'github.com/distribution/distribution/v3',
  crane: 'github.com/google/go-containerregistry',
  syft: 'github.com/anchore/syft',
  cosign: 'github.com/sigstore/cosign/v3',
} as const;

/** The version each tool's module is pinned at in the module's go.mod. */
export const pinnedReleaseTools = sharedUntilFailure(async (): Promise<Record<ReleaseToolName, string>> => {
  const { stdout } = await run(
    'go',
    ['list', '-m', '-f', '{{.Path}} {{.Version}}', ...Object.values(modules)],
    {
      cwd: releaseToolsModuleDir,
    },
  );
  const versions = new Map(
    stdout
      .trim()
      .split('\n')
      .map((line) => line.split(' ') as [string, string]),
  );
  return Object.fromEntries(
    Object.entries(modules).map(([tool, module]) => {
      const version = versions.get(module);
      if (!version) throw new Error(`${releaseToolsModuleDir}go.mod does not pin ${module}`);
      return [tool, version];
    }),
  ) as Record<ReleaseToolName, string>;
});

/** The stamps each tool's own release build sets, so `<tool> version` reports its release. */
function ldflags(pinned: Record<ReleaseToolName, string>): string {
  const stamps = {
    'github.com/distribution/distribution/v3/version.version': pinned.registry,
    'github.com/google/go-containerregistry/cmd/crane/cmd.Version': pinned.crane,
    'main.version': pinned.syft.replace(/^v/, ''),
    'sigs.k8s.io/release-utils/version.gitVersion': pinned.cosign,
  };
  return ['-s', '-w', ...Object.entries(stamps).map(([name, value]) => `-X ${name}=${value}`)].join(' ');
}

export interface EnsureReleaseToolsOptions {
  log?: (line: string) => void;
  onProgress?: (progress: GoBuildProgress) => void;
}

/**
 * Returns the path of every release tool, building them on the first call on this machine for these
 * inputs (`pnpm controlplane build`, which scripts/setup.sh runs, does it up front). Memoised.
 */
export const ensureReleaseTools = sharedUntilFailure(
  async (options: EnsureReleaseToolsOptions = {}): Promise<ReleaseTools> => {
    const pinned = await pinnedReleaseTools();
    const flags = ['-trimpath', `-ldflags=${ldflags(pinned)}`];
    const dir = await ensureGoBuild(
      {
        what: 'the release tools',
        detail: `distribution ${pinned.registry}, crane ${pinned.crane}, syft ${pinned.syft}, cosign ${pinned.cosign}`,
        moduleDir: releaseToolsModuleDir,
        cacheName: 'release-tools',
        settings: flags.join(' '),
        goBuildArgs: (outDir) => ['build', ...flags, '-o', `${outDir}/`, 'tool'],
        listArgs: ['list', '-deps', 'tool'],
        binaries: releaseToolNames,
        entryName: (digest) => `release-tools-${digest.slice(0, 12)}`,
      },
      options.log,
      options.onProgress,
    );
    return Object.fromEntries(releaseToolNames.map((name) => [name, `${dir}/${name}`])) as ReleaseTools;
  },
);
