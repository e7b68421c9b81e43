/**
 * `pnpm release`: a release's steps, run by .github/workflows/release.yml on a tag and, with `--local`,
 * here against the test node's registry.
 *
 *   pnpm release --local vX.Y.Z [--owner loopwright] [--registry 127.0.0.1:<port>] [--out .release]
 *       images (pushed, SBOM attested, signed), charts (helm push) and assets, into the registry that
 *       `pnpm cluster up` started (or --registry), as `<registry>/<owner>/...`
 *   pnpm release charts vX.Y.Z --registry <registry>/<owner> [--out dist/charts]
 *       package every chart with the release's version, images at <registry>/<owner>/<controller>, and
 *       `helm push` them to oci://<registry>/<owner>/charts (log in with `helm registry login` first)
 *   pnpm release assets vX.Y.Z --registry <registry>/<owner> [--out dist/release]
 *       the CRDs, mailgun-cluster's clusterctl files and release-notes.md, for the GitHub release
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  backgroundStatePath,
  findTestNode,
  packageReleaseChart,
  releaseNotes,
  parseReleaseTag,
  pushChart,
  readBackgroundState,
  releaseLocal,
  ReleaseVersionError,
  workspaceControllers,
  writeReleaseAssets,
} from '@loopwright/cluster';

const repoRoot = resolve(import.meta.dirname, '..');

class UsageError extends Error {}

/** The registry of the node `pnpm cluster up` started (its state file), or of the test run's node. */
async function nodeRegistry(): Promise<string> {
  const fromEnv = findTestNode()?.registry;
  if (fromEnv) return fromEnv;
  const running = await readBackgroundState(backgroundStatePath(repoRoot, true));
  if (running?.node?.registry) return running.node.registry;
  throw new UsageError(
    'no registry: start the test node with `pnpm cluster up` (it runs one), or pass --registry <host:port>',
  );
}

function registryAndOwner(value: string | undefined): string {
  if (!value || !/^[^/\s]+\/[^\s]+$/.test(value))
    throw new UsageError(
      `--registry must be <registry>/<owner>, e.g. ghcr.io/loopwright; got ${JSON.stringify(value ?? '')}`,
    );
  return value.replace(/\/+$/, '');
}

async function packageAll(version: string, base: string, outDir: string): Promise<Record<string, string>> {
  // A tag's release needs its CHANGELOG section: no fallback.
  const notes = await releaseNotes(version);
  const packages: Record<string, string> = {};
  for (const { name } of workspaceControllers())
    packages[name] = await packageReleaseChart({
      controller: name,
      version,
      imageRepository: `${base}/${name}`,
      notes,
      outDir,
    });
  return packages;
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      local: { type: 'boolean' },
      registry: { type: 'string' },
      owner: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const log = (line: string): void => void process.stderr.write(`release: ${line}\n`);
  if (values.local) {
    const [tag, ...extra] = positionals;
    if (tag === undefined || extra.length > 0) throw new UsageError('usage: pnpm release --local vX.Y.Z');
    parseReleaseTag(tag);
    const result = await releaseLocal({
      tag,
      registry: values.registry ?? (await nodeRegistry()),
      owner: values.owner,
      outDir: resolve(values.out ?? join(repoRoot, '.release')),
      log,
    });
    // What the release published, for scripts and tests that go on from it.
    await writeFile(join(result.assets.dir, '..', 'release.json'), `${JSON.stringify(result, null, 2)}\n`);
    const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    for (const image of result.images)
      console.log(`image  ${image.reference}@${image.digest}  ${mib(image.sizeBytes)}`);
    for (const chart of result.charts)
      console.log(
        `chart  ${chart.reference} --version ${chart.version}  ${(chart.sizeBytes / 1024).toFixed(1)} KiB`,
      );
    console.log(`assets ${result.assets.dir}: ${result.assets.files.join(', ')}`);
    console.log(
      `verify cosign verify --key ${result.publicKeyPath} --insecure-ignore-tlog --allow-http-registry <image>@<digest>`,
    );
    console.log(`clusterctl --config ${result.clusterctlConfigPath} (a repository of the provider mailgun)`);
    console.log(`released ${result.release.tag} in ${result.seconds.toFixed(1)} s`);
    return;
  }
  const [command, tag, ...extra] = positionals;
  if ((command !== 'charts' && command !== 'assets') || tag === undefined || extra.length > 0)
    throw new UsageError(
      'usage: pnpm release --local vX.Y.Z | charts vX.Y.Z --registry <registry>/<owner> | assets vX.Y.Z --registry <registry>/<owner> [--out <dir>]',
    );
  const release = parseReleaseTag(tag);
  const base = registryAndOwner(values.registry);
  if (command === 'charts') {
    const packages = await packageAll(release.version, base, resolve(values.out ?? 'dist/charts'));
    for (const [controller, packagePath] of Object.entries(packages)) {
      const digest = await pushChart(packagePath, base, false);
      console.log(`oci://${base}/charts/${controller} --version ${release.version} ${digest}`);
    }
    return;
  }
  const scratch = await mkdtemp(join(tmpdir(), 'loopwright-release-'));
  try {
    const packages = await packageAll(release.version, base, scratch);
    const assets = await writeReleaseAssets(release, packages, resolve(values.out ?? 'dist/release'));
    console.log(`${assets.dir}: ${assets.files.join(', ')}`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const usage =
    error instanceof UsageError ||
    error instanceof ReleaseVersionError ||
    (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'));
  console.error(`release: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(usage ? 2 : 1);
});
