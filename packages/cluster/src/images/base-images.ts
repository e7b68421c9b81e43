/**
 * The base images the Dockerfile names, as stand-ins built from this machine (no registry is
 * reachable), and the pod sandbox image. Each is built once per output directory and process.
 */
import { join } from 'node:path';
import { busyboxImage, busyboxStandIn } from './busybox.ts';
import { DockerfileError } from './dockerfile.ts';
import { distrolessNodejsImage, distrolessNodejsStandIn } from './distroless-nodejs.ts';
import { archiveFileName, normalizedImageName } from './image-name.ts';
import { writeImageArchive, type Image, type ImageArchive } from './oci-image.ts';
import { pauseStandIn } from './pause.ts';

const standIns: Readonly<Record<string, (blobsDir: string) => Promise<Image>>> = {
  [distrolessNodejsImage]: distrolessNodejsStandIn,
  [busyboxImage]: busyboxStandIn,
};

const built = new Map<string, Promise<Image>>();

/** Where an output directory keeps layer blobs, shared by every image built into it. */
export function blobsDirOf(outDir: string): string {
  return join(outDir, 'blobs');
}

/**
 * The name:tag a stand-in is looked up by. A reference pinned by digest, `name:tag@sha256:<hex>` (as
 * the Dockerfile names its bases, the tag kept for Renovate), is matched by its name:tag: the stand-in is
 * built here and cannot have the registry's digest. A digest without a tag names no stand-in.
 */
export function standInName(reference: string, line = 0): string {
  const at = reference.indexOf('@');
  if (at < 0) return normalizedImageName(reference);
  const nameTag = reference.slice(0, at);
  const digest = reference.slice(at + 1);
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) {
    throw new DockerfileError(line, `base image ${reference}: ${digest} is not a sha256 digest`);
  }
  if (!(nameTag.split('/').pop() ?? '').includes(':')) {
    throw new DockerfileError(
      line,
      `base image ${reference} is pinned by digest alone: keep its tag (name:tag@sha256:...) to match a stand-in`,
    );
  }
  return normalizedImageName(nameTag);
}

/**
 * The stand-in for `reference` (compared as Docker does, `busybox:1.37.0` is
 * `docker.io/library/busybox:1.37.0`; `name:tag@sha256:...` by its name:tag); any other base throws,
 * naming the FROM line.
 */
export function standInBaseImage(reference: string, blobsDir: string, line = 0): Promise<Image> {
  const name = standInName(reference, line);
  const build = standIns[name];
  if (!build) {
    throw new DockerfileError(
      line,
      `no stand-in for base image ${reference}; known: ${Object.keys(standIns).join(', ')}`,
    );
  }
  const key = `${blobsDir}\0${name}`;
  let image = built.get(key);
  if (!image) {
    image = build(blobsDir);
    built.set(key, image);
    image.catch(() => built.delete(key));
  }
  return image;
}

export interface BuildImagesOptions {
  /** Receives one `<name>.tar` per image and a `blobs` directory of layers. */
  outDir: string;
}

/** The stand-in bases (distroless Node 24, busybox) as archives `ctr images import` takes. */
export async function buildBaseImages({ outDir }: BuildImagesOptions): Promise<ImageArchive[]> {
  const blobsDir = blobsDirOf(outDir);
  return Promise.all(
    Object.keys(standIns).map(async (name) => {
      const image = await standInBaseImage(name, blobsDir);
      return writeImageArchive(image, join(outDir, archiveFileName(image.name)));
    }),
  );
}

/**
 * The pod sandbox image ({@link pauseImage}) around a pause binary built elsewhere; resolves with the
 * archive's path.
 */
export async function buildPauseImage(pauseBinaryPath: string, outDir: string): Promise<string> {
  const image = await pauseStandIn(pauseBinaryPath, blobsDirOf(outDir));
  const { archivePath } = await writeImageArchive(image, join(outDir, archiveFileName(image.name)));
  return archivePath;
}
