/**
 * `pnpm release --local vX.Y.Z`: the release workflow's steps against the node's registry, without the
 * upload to GitHub. Images built from the one Dockerfile, pushed by crane, each with a syft SBOM attached
 * as a cosign attestation and a cosign signature; charts packaged with the release's version and pushed
 * by `helm push`; the release's assets, and a clusterctl repository that serves them from files.
 */
import { copyFile, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ensureReleaseTools } from '../tools/release-tools.ts';
import { workspaceControllers } from '../workspace/controllers.ts';
import { writeReleaseAssets, type ReleaseAssets } from './assets.ts';
import { releaseNotes } from './changelog.ts';
import { packageReleaseChart, pushChart } from './charts.ts';
import { CLUSTERCTL_PROVIDER_LABEL, CLUSTERCTL_PROVIDER_NAME } from './clusterctl.ts';
import { publishImage, type PublishedImage } from './images.ts';
import { localSigningKey } from './signing.ts';
import { parseReleaseTag, type ReleaseVersion } from './version.ts';

/** The charts' and images' default owner: `ghcr.io/loopwright/...`. */
const DEFAULT_OWNER = 'loopwright';

export interface LocalReleaseOptions {
  /** `vX.Y.Z`. */
  tag: string;
  /** The registry's host, `127.0.0.1:<port>` (plain HTTP): the node's (`TestNode.registry`). */
  registry: string;
  /** The path under the registry: `<registry>/<owner>/<controller>`, `<registry>/<owner>/charts/<chart>`. */
  owner?: string;
  /** Keeps the built images, SBOMs, packaged charts, assets and the signing key (reused: one key signs every local release made here). */
  outDir: string;
  log?: (line: string) => void;
}

export interface PublishedChart {
  controller: string;
  /** `oci://<registry>/<owner>/charts/<controller>`: what `helm install` takes, with `--version`. */
  reference: string;
  version: string;
  digest: string;
  packagePath: string;
  sizeBytes: number;
}

export interface LocalRelease {
  release: ReleaseVersion;
  registry: string;
  owner: string;
  images: PublishedImage[];
  charts: PublishedChart[];
  assets: ReleaseAssets;
  /** Verifies every image's signature and SBOM attestation: `cosign verify --key <this>`. */
  publicKeyPath: string;
  /** A clusterctl configuration whose `mailgun` infrastructure provider is this release's files. */
  clusterctlConfigPath: string;
  /** Wall-clock time of the whole release. */
  seconds: number;
}

/**
 * clusterctl's local repository: `<root>/infrastructure-mailgun/<tag>/` holds the release's
 * infrastructure-components.yaml and metadata.yaml, and a clusterctl.yaml names it by a file URL.
 */
async function clusterctlRepository(
  outDir: string,
  release: ReleaseVersion,
  assets: ReleaseAssets,
): Promise<string> {
  const root = join(outDir, 'clusterctl');
  const versionDir = join(root, CLUSTERCTL_PROVIDER_LABEL, release.tag);
  await mkdir(versionDir, { recursive: true });
  for (const file of ['infrastructure-components.yaml', 'metadata.yaml'])
    await copyFile(join(assets.dir, file), join(versionDir, file));
  const configPath = join(root, 'clusterctl.yaml');
  await writeFile(
    configPath,
    stringify({
      providers: [
        {
          name: CLUSTERCTL_PROVIDER_NAME,
          type: 'InfrastructureProvider',
          url: `file://${join(versionDir, 'infrastructure-components.yaml')}`,
        },
      ],
    }),
  );
  return configPath;
}

export async function releaseLocal(options: LocalReleaseOptions): Promise<LocalRelease> {
  const started = performance.now();
  const log = options.log ?? (() => undefined);
  const release = parseReleaseTag(options.tag);
  const owner = options.owner ?? DEFAULT_OWNER;
  const base = `${options.registry}/${owner}`;
  const outDir = join(options.outDir, release.tag);
  await mkdir(outDir, { recursive: true });
  const tools = await ensureReleaseTools({ log });
  const signingKey = await localSigningKey(tools, join(options.outDir, 'signing'));

  // A version the CHANGELOG does not know yet (a local release of the next patch) takes [Unreleased].
  const notes = await releaseNotes(release.version, 'Unreleased');
  const images: PublishedImage[] = [];
  const charts: PublishedChart[] = [];
  for (const { name: controller } of workspaceControllers()) {
    const repository = `${base}/${controller}`;
    const image = await publishImage({
      controller,
      repository,
      version: release.version,
      outDir: join(outDir, 'images'),
      tools,
      signingKey,
      plainHttp: true,
    });
    images.push(image);
    log(
      `${image.reference}@${image.digest}: pushed, signed, SBOM of ${image.sbomNpmPackages.length} npm packages attested`,
    );
    const packagePath = await packageReleaseChart({
      controller,
      version: release.version,
      imageRepository: repository,
      notes,
      outDir: join(outDir, 'charts'),
    });
    const digest = await pushChart(packagePath, base, true);
    charts.push({
      controller,
      reference: `oci://${base}/charts/${controller}`,
      version: release.version,
      digest,
      packagePath,
      sizeBytes: (await stat(packagePath)).size,
    });
    log(`oci://${base}/charts/${controller}:${release.version}: pushed`);
  }
  const assets = await writeReleaseAssets(
    release,
    Object.fromEntries(charts.map((chart) => [chart.controller, chart.packagePath])),
    join(outDir, 'assets'),
    'Unreleased',
  );
  const clusterctlConfigPath = await clusterctlRepository(options.outDir, release, assets);
  return {
    release,
    registry: options.registry,
    owner,
    images,
    charts,
    assets,
    publicKeyPath: signingKey.publicKeyPath,
    clusterctlConfigPath,
    seconds: (performance.now() - started) / 1000,
  };
}
