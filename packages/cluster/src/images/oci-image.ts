/**
 * OCI image config, manifest and index, and the single-file archive of an OCI image layout that
 * `ctr images import` reads. Field names and media types are those of the OCI image spec v1.1.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { layerMediaType, type Layer } from './layer.ts';
import { sortEntries, tarArchive, type TarEntry } from './tar.ts';

/** The runtime part of an image config (`config` in the spec), the fields Docker's builder sets. */
export interface ContainerConfig {
  User?: string;
  ExposedPorts?: Record<string, Record<string, never>>;
  Env?: string[];
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  WorkingDir?: string;
  Labels?: Record<string, string>;
}

export interface HistoryEntry {
  created: string;
  created_by: string;
  comment?: string;
  empty_layer?: boolean;
}

/** An image before it is written: its full name, runtime config, layers (bottom first) and history. */
export interface Image {
  /** The name containerd lists it under, fully qualified: `docker.io/library/busybox:1.37.0`. */
  name: string;
  config: ContainerConfig;
  layers: readonly Layer[];
  history: readonly HistoryEntry[];
}

export interface ImageArchive {
  name: string;
  archivePath: string;
  manifestDigest: string;
  configDigest: string;
  /** What a registry would store: compressed layers plus the config blob. */
  sizeBytes: number;
}

const mediaTypes = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: layerMediaType,
} as const;

/** Every timestamp is the epoch, so that the same inputs give the same digests. */
export const epoch = '1970-01-01T00:00:00Z';

/** The platform of the host, whose Node binary and libraries the images carry. */
function hostPlatform(): { architecture: string; os: string } {
  const architectures: Partial<Record<string, string>> = { x64: 'amd64', arm64: 'arm64' };
  const architecture = architectures[process.arch];
  if (architecture === undefined || process.platform !== 'linux') {
    throw new Error(`images: no OCI platform for ${process.platform}/${process.arch}`);
  }
  return { architecture, os: 'linux' };
}

interface Blob {
  digest: string;
  size: number;
  bytes: Buffer;
}

function jsonBlob(value: unknown): Blob {
  const bytes = Buffer.from(JSON.stringify(value));
  return { digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, size: bytes.length, bytes };
}

function blobPath(digest: string): string {
  return `blobs/${digest.replace(':', '/')}`;
}

function fileEntry(path: string, bytes: Buffer): TarEntry {
  return { type: 'file', path, mode: 0o644, uid: 0, gid: 0, size: bytes.length, content: bytes };
}

/**
 * Writes `image` as one tar holding an OCI image layout (`oci-layout`, `index.json`, `blobs/sha256/`).
 * The index names the manifest twice: `io.containerd.image.name`, which containerd's import takes as the
 * image name as it is, and `org.opencontainers.image.ref.name`, the spec's own annotation.
 */
export async function writeImageArchive(image: Image, archivePath: string): Promise<ImageArchive> {
  const platform = hostPlatform();
  const config = jsonBlob({
    created: epoch,
    ...platform,
    config: image.config,
    rootfs: { type: 'layers', diff_ids: image.layers.map((layer) => layer.diffId) },
    history: image.history,
  });
  const manifest = jsonBlob({
    schemaVersion: 2,
    mediaType: mediaTypes.manifest,
    config: { mediaType: mediaTypes.config, digest: config.digest, size: config.size },
    layers: image.layers.map((layer) => ({
      mediaType: mediaTypes.layer,
      digest: layer.digest,
      size: layer.size,
    })),
  });
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: mediaTypes.index,
      manifests: [
        {
          mediaType: mediaTypes.manifest,
          digest: manifest.digest,
          size: manifest.size,
          platform,
          annotations: {
            'io.containerd.image.name': image.name,
            'org.opencontainers.image.ref.name': image.name,
          },
        },
      ],
    }),
  );
  const root = { uid: 0, gid: 0 };
  const layerBlobs = new Map(image.layers.map((layer) => [layer.digest, layer]));
  const entries: TarEntry[] = [
    fileEntry('oci-layout', Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' }))),
    fileEntry('index.json', index),
    { type: 'directory', path: 'blobs', mode: 0o755, ...root },
    { type: 'directory', path: 'blobs/sha256', mode: 0o755, ...root },
    fileEntry(blobPath(config.digest), config.bytes),
    fileEntry(blobPath(manifest.digest), manifest.bytes),
    // A base layer shared by two stages would otherwise be listed twice.
    ...[...layerBlobs.values()].map((layer): TarEntry => ({
      type: 'file',
      path: blobPath(layer.digest),
      mode: 0o644,
      size: layer.size,
      content: { hostPath: layer.path },
      ...root,
    })),
  ];
  await mkdir(dirname(archivePath), { recursive: true });
  await pipeline(tarArchive(sortEntries(entries)), createWriteStream(archivePath));
  return {
    name: image.name,
    archivePath,
    manifestDigest: manifest.digest,
    configDigest: config.digest,
    sizeBytes: config.size + image.layers.reduce((sum, layer) => sum + layer.size, 0),
  };
}
