/**
 * A controller's release image: built from the one Dockerfile (as `pnpm test` builds it, see ../images),
 * pushed by crane to `<repository>:<version>`, described by a syft SBOM and signed by cosign, with the
 * SBOM attached as a signed attestation, as the release workflow does with buildx, syft and cosign.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildControllerImage } from '../images/controller-image.ts';
import type { ReleaseTools } from '../tools/release-tools.ts';
import type { SigningKey } from './signing.ts';
import { attestImage, signImage } from './signing.ts';

const run = promisify(execFile);

export interface PublishedImage {
  controller: string;
  /** `<repository>:<version>`. */
  reference: string;
  /** The manifest's digest, `sha256:...`: what the signature and the SBOM attestation name. */
  digest: string;
  /** Compressed layers plus config, as the registry stores them. */
  sizeBytes: number;
  /** The SPDX JSON document syft wrote. */
  sbomPath: string;
  /** npm packages the SBOM lists, `name@version`. */
  sbomNpmPackages: string[];
}

export interface PublishImageOptions {
  controller: string;
  /** e.g. `127.0.0.1:5000/loopwright/at-scheduler`. */
  repository: string;
  version: string;
  outDir: string;
  tools: ReleaseTools;
  signingKey: SigningKey;
  /** The registry speaks plain HTTP (the local one). */
  plainHttp: boolean;
}

interface SpdxDocument {
  packages?: { name?: string; versionInfo?: string; externalRefs?: { referenceLocator?: string }[] }[];
}

/** The npm packages an SPDX document lists (their purl is `pkg:npm/...`), as `name@version`. */
export function npmPackagesOf(sbom: SpdxDocument): string[] {
  return (sbom.packages ?? [])
    .filter((pkg) => pkg.externalRefs?.some((ref) => ref.referenceLocator?.startsWith('pkg:npm/')))
    .map((pkg) => `${pkg.name ?? '?'}@${pkg.versionInfo ?? '?'}`)
    .sort();
}

export async function publishImage(options: PublishImageOptions): Promise<PublishedImage> {
  const { controller, repository, version, outDir, tools } = options;
  const reference = `${repository}:${version}`;
  const image = await buildControllerImage(controller, { outDir, version, repository });
  // crane reads an OCI image layout from a directory; the build writes the layout as one tar.
  const layout = join(outDir, 'layouts', controller);
  await rm(layout, { recursive: true, force: true });
  await mkdir(layout, { recursive: true });
  await run('tar', ['-xf', image.archivePath, '-C', layout]);
  const insecure = options.plainHttp ? ['--insecure'] : [];
  await run(tools.crane, ['push', layout, reference, ...insecure], { maxBuffer: 16 * 1024 * 1024 });
  const { stdout: digest } = await run(tools.crane, ['digest', reference, ...insecure]);
  const pinned = `${repository}@${digest.trim()}`;

  // syft reads the same layout the registry now holds; the bundle's package-lock.json names the npm
  // packages esbuild bundled (the image has no node_modules for syft to find them in).
  const sbomPath = join(outDir, 'sbom', `${controller}.spdx.json`);
  await mkdir(join(outDir, 'sbom'), { recursive: true });
  await run(
    tools.syft,
    [
      'scan',
      `oci-dir:${layout}`,
      '--select-catalogers',
      '+javascript-lock-cataloger',
      '--source-name',
      repository,
      '--source-version',
      version,
      '-o',
      `spdx-json=${sbomPath}`,
    ],
    { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, SYFT_CHECK_FOR_APP_UPDATE: 'false' } },
  );
  const sbom = JSON.parse(await readFile(sbomPath, 'utf8')) as SpdxDocument;

  await signImage(tools, options.signingKey, pinned, options.plainHttp);
  await attestImage(tools, options.signingKey, pinned, sbomPath, 'spdxjson', options.plainHttp);
  await writeFile(join(outDir, 'sbom', `${controller}.digest`), `${pinned}\n`);
  return {
    controller,
    reference,
    digest: digest.trim(),
    sizeBytes: image.sizeBytes,
    sbomPath,
    sbomNpmPackages: npmPackagesOf(sbom),
  };
}
