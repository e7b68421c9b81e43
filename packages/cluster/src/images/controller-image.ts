/**
 * A controller's image, built from the repository's one Dockerfile with `--build-arg
 * CONTROLLER=<controller>`: its runtime stage executed on a stand-in base, and its build stage replaced by
 * what that stage runs, scripts/bundle.sh, run on the host (the stage itself needs node:24-bookworm-slim
 * and a container runtime, neither of which exists here).
 */
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { blobsDirOf, standInBaseImage, type BuildImagesOptions } from './base-images.ts';
import {
  DockerfileError,
  parseDockerfile,
  type Dockerfile,
  type Instruction,
  type Stage,
} from './dockerfile.ts';
import { executeLastStage, stageVariables } from './dockerfile-execute.ts';
import { expandWord } from './dockerfile-words.ts';
import { archiveFileName } from './image-name.ts';
import { repositoryRoot } from '../workspace/repository-root.ts';
import { writeImageArchive, type ImageArchive } from './oci-image.ts';

const run = promisify(execFile);

export interface ControllerImage extends ImageArchive {
  appVersion: string;
  /** The layer of `COPY --from=build /bundle /app`: the bundle. */
  appLayerBytes: { compressed: number; uncompressed: number };
}

/** The Dockerfile every controller's image is built from: the repository root's, `--build-arg CONTROLLER`. */
export function dockerfilePath(): string {
  return join(repositoryRoot, 'Dockerfile');
}

/** The package's one-line description, `--build-arg DESCRIPTION` (the image's description label). */
async function controllerDescription(controller: string): Promise<string> {
  const manifest = JSON.parse(
    await readFile(join(repositoryRoot, 'packages', controller, 'package.json'), 'utf8'),
  ) as { description?: unknown };
  return typeof manifest.description === 'string' ? manifest.description : '';
}

export interface ChartDefaultImage {
  /** `<repository>:<tag>`, the tag being `image.tag` if set, else the appVersion. */
  name: string;
  /** `image.repository` from values.yaml. */
  repository: string;
  appVersion: string;
}

/**
 * The image the controller's chart runs by default: `image.repository` from values.yaml, tagged with
 * the chart's appVersion (the chart's `image.tag` default is empty, meaning appVersion).
 */
export async function chartDefaultImage(controller: string): Promise<ChartDefaultImage> {
  const chartDir = join(repositoryRoot, 'charts', controller);
  const chart = parseYaml(await readFile(join(chartDir, 'Chart.yaml'), 'utf8')) as { appVersion?: unknown };
  const values = parseYaml(await readFile(join(chartDir, 'values.yaml'), 'utf8')) as {
    image?: { repository?: unknown; tag?: unknown };
  };
  const { appVersion } = chart;
  const repository = values.image?.repository;
  if (typeof appVersion !== 'string' || typeof repository !== 'string') {
    throw new Error(`charts/${controller}: no appVersion in Chart.yaml or image.repository in values.yaml`);
  }
  const tag =
    typeof values.image?.tag === 'string' && values.image.tag !== '' ? values.image.tag : appVersion;
  return { name: `${repository}:${tag}`, repository, appVersion };
}

/**
 * The name a build gives the image: the chart's default image when neither `version` nor `repository`
 * is given, else `<repository>:<version>`, each defaulting to the chart's. Checked here, because a
 * registry refuses an upper-case repository or a tag such as `1.0.0+build` only at the push, long after
 * the build.
 */
export function controllerImageName(
  chartDefault: ChartDefaultImage,
  { version, repository }: Pick<ControllerImageOptions, 'version' | 'repository'>,
): string {
  if (version === undefined && repository === undefined) return chartDefault.name;
  const tag = version ?? chartDefault.appVersion;
  const name = repository ?? chartDefault.repository;
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) {
    throw new Error(
      `image version ${JSON.stringify(tag)} is not a valid tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})`,
    );
  }
  const lastComponent = name.split('/').pop() ?? '';
  if (!/^[a-z0-9][a-z0-9._/:-]*$/.test(name) || lastComponent.includes(':') || name.endsWith('/')) {
    throw new Error(
      `image repository ${JSON.stringify(name)} must be a lower-case name without a tag or digest, e.g. ghcr.io/loopwright/at-scheduler`,
    );
  }
  return `${name}:${tag}`;
}

/**
 * Checks that the build stage produces `sourcePath` with `./scripts/bundle.sh <controller> <sourcePath>`,
 * the command run here in its place, its words expanded with the stage's ARGs and ENVs under
 * `buildArgs` (`./scripts/bundle.sh ${CONTROLLER} /bundle`); a Dockerfile that bundles differently throws.
 */
export function bundleCommandOf(
  dockerfile: Dockerfile,
  stage: Stage,
  buildArgs: Readonly<Record<string, string>>,
  controller: string,
  sourcePath: string,
  copy: Instruction,
): void {
  const invocations = stage.instructions
    .filter(({ keyword }) => keyword === 'RUN')
    .flatMap((instruction) =>
      [
        ...instruction.arguments.matchAll(
          /(?:^|&&|;)\s*\.\/scripts\/bundle\.sh\s+(\S+)\s+(\S+)\s*(?=$|&&|;)/g,
        ),
      ].map((match) => {
        const variables = stageVariables(dockerfile, stage, instruction, buildArgs);
        return {
          controller: expandWord(match[1] ?? '', variables),
          output: expandWord(match[2] ?? '', variables),
          line: instruction.line,
        };
      }),
    );
  const [invocation, ...others] = invocations;
  if (!invocation || others.length > 0) {
    throw new DockerfileError(
      copy.line,
      `stage ${stage.name ?? ''} must run ./scripts/bundle.sh exactly once, found ${invocations.length}`,
    );
  }
  if (invocation.controller !== controller || invocation.output !== sourcePath) {
    throw new DockerfileError(
      invocation.line,
      `expected ./scripts/bundle.sh ${controller} ${sourcePath}, found ./scripts/bundle.sh ${invocation.controller} ${invocation.output} (with --build-arg CONTROLLER=${buildArgs['CONTROLLER'] ?? ''})`,
    );
  }
}

async function bundle(controller: string, outDir: string): Promise<void> {
  await run(join(repositoryRoot, 'scripts', 'bundle.sh'), [controller, outDir], {
    cwd: repositoryRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Where the bundle is made (and removed once it is in the layer). */
export function bundleDirOf(outDir: string, controller: string): string {
  return join(outDir, 'bundles', controller, 'bundle');
}

export interface ControllerImageOptions extends BuildImagesOptions {
  /** The image's version: its tag and `--build-arg VERSION`. Default: the chart's appVersion. */
  version?: string;
  /** Where the image is to live, e.g. `ghcr.io/loopwright/at-scheduler`. Default: the chart's `image.repository`. */
  repository?: string;
}

/**
 * Builds `ghcr.io/loopwright/<controller>:<appVersion>` (the chart's default image), or
 * `<repository>:<version>` for a release, from the root Dockerfile with `--build-arg
 * CONTROLLER=<controller> --build-arg VERSION=<version> --build-arg DESCRIPTION=<package description>`,
 * as one archive in `outDir`.
 */
export async function buildControllerImage(
  controller: string,
  { outDir, ...release }: ControllerImageOptions,
): Promise<ControllerImage> {
  const chartDefault = await chartDefaultImage(controller);
  const appVersion = release.version ?? chartDefault.appVersion;
  const name = controllerImageName(chartDefault, release);
  const dockerfile = parseDockerfile(await readFile(dockerfilePath(), 'utf8'));
  const buildArgs = {
    CONTROLLER: controller,
    DESCRIPTION: await controllerDescription(controller),
    VERSION: appVersion,
  };
  const blobsDir = blobsDirOf(outDir);
  const scratch = join(outDir, 'bundles', controller);
  await rm(scratch, { recursive: true, force: true });
  try {
    const { image, addedLayers } = await executeLastStage(dockerfile, {
      name,
      blobsDir,
      buildArgs,
      baseImage: (reference, line) => standInBaseImage(reference, blobsDir, line),
      stageOutput: async (stage, sourcePath, copy) => {
        bundleCommandOf(dockerfile, stage, buildArgs, controller, sourcePath, copy);
        const output = bundleDirOf(outDir, controller);
        await bundle(controller, output);
        return output;
      },
    });
    const appLayer = addedLayers.at(-1);
    if (!appLayer) throw new Error(`${dockerfilePath()}: the runtime stage added no layer`);
    const archive = await writeImageArchive(image, join(outDir, archiveFileName(name)));
    return {
      ...archive,
      appVersion,
      appLayerBytes: { compressed: appLayer.size, uncompressed: appLayer.uncompressedSize },
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
