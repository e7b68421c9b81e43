/**
 * The real Cluster API core manager (`sigs.k8s.io/cluster-api/core`, the program the upstream image
 * runs) and its module's files, at the version packages/testing/cluster-api/go.mod pins.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureGoBuild, sharedUntilFailure } from '../cached-go-build.ts';

const run = promisify(execFile);

/** The Go module that pins Cluster API (its go.mod is the single source of truth for the version). */
const clusterApiModuleDir = fileURLToPath(new URL('../../cluster-api/', import.meta.url));

const clusterApiModule = 'sigs.k8s.io/cluster-api';

export interface PinnedClusterApi {
  /** The pinned release, e.g. `v1.14.2`. */
  version: string;
  /** The module's files in Go's module cache (read-only): the CRDs and webhook manifests live there. */
  moduleDir: string;
}

/**
 * Reads the pinned version from go.mod and where the module's files are, downloading the module into
 * Go's module cache if it is not there yet (the build needs it anyway).
 */
export const pinnedClusterApi = sharedUntilFailure(async (): Promise<PinnedClusterApi> => {
  const { stdout } = await run('go', ['mod', 'download', '-json', clusterApiModule], {
    cwd: clusterApiModuleDir,
  });
  const download = JSON.parse(stdout) as { Version?: string; Dir?: string; Error?: string };
  if (!download.Version || !download.Dir)
    throw new Error(
      `go.mod in ${clusterApiModuleDir} does not pin ${clusterApiModule}: ${download.Error ?? ''}`,
    );
  return { version: download.Version, moduleDir: download.Dir };
});

/**
 * The go build arguments. The -X flags stamp the release as Cluster API's own build does
 * (hack/scripts/release/version.sh), so the manager logs and sends its version; no commit or build
 * date: the module proxy carries neither, and the binary depends on its inputs only, as its key does.
 */
function buildArgs(version: string, output: string): string[] {
  const [major = '', minor = ''] = version.replace(/^v/, '').split('.');
  const pkg = `${clusterApiModule}/version`;
  const ldflags = `-s -w -X ${pkg}.gitVersion=${version} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor} -X ${pkg}.gitTreeState=clean`;
  return ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', output, `${clusterApiModule}/core`];
}

/**
 * Returns the path of the pinned Cluster API core manager, building it with the Go toolchain on first
 * use on this machine (about 3.5 minutes on 2 cores with a cold Go build cache). Memoised per process.
 */
export const ensureClusterApiManager = sharedUntilFailure(
  async (options: { log?: (line: string) => void } = {}): Promise<string> => {
    const { version } = await pinnedClusterApi();
    const dir = await ensureGoBuild(
      {
        what: `the Cluster API core manager ${version}`,
        moduleDir: clusterApiModuleDir,
        cacheName: 'cluster-api',
        settings: buildArgs(version, '').join(' '),
        goBuildArgs: (outDir) => buildArgs(version, join(outDir, 'cluster-api-manager')),
        binaries: ['cluster-api-manager'],
        entryName: (digest) => `cluster-api-${version}-${digest.slice(0, 12)}`,
      },
      options.log,
    );
    return join(dir, 'cluster-api-manager');
  },
);
