import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { sortEntries, tarArchive, type TarEntry } from './tar.ts';

/** A gzip'ed layer tar stored as a content-addressed blob. */
export interface Layer {
  /** sha256 of the compressed blob: what manifests reference. */
  digest: string;
  /** sha256 of the uncompressed tar: the config's `rootfs.diff_ids` entry. */
  diffId: string;
  /** Compressed size in bytes. */
  size: number;
  uncompressedSize: number;
  /** The blob file, `<blobsDir>/sha256/<hex>`. */
  path: string;
  /** What the layer holds, sorted: later instructions look up existing directories here. */
  entries: readonly TarEntry[];
}

export const layerMediaType = 'application/vnd.oci.image.layer.v1.tar+gzip';

/** Counts and hashes what passes through, unchanged. */
function measure(hash: ReturnType<typeof createHash>, counter: { bytes: number }) {
  return async function* (source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      hash.update(chunk);
      counter.bytes += chunk.length;
      yield chunk;
    }
  };
}

/**
 * Writes `entries` as a gzip'ed tar blob under `blobsDir` (an OCI layout's `blobs` directory). The same
 * entries give the same digest: sorted, mtime 0, and a gzip header without a timestamp or name.
 */
export async function writeLayer(entries: readonly TarEntry[], blobsDir: string): Promise<Layer> {
  const sorted = sortEntries(entries);
  const dir = join(blobsDir, 'sha256');
  await mkdir(dir, { recursive: true });
  const uncompressedHash = createHash('sha256');
  const compressedHash = createHash('sha256');
  const uncompressed = { bytes: 0 };
  const compressed = { bytes: 0 };
  const partial = join(dir, `.partial-${process.pid}-${Math.random().toString(36).slice(2)}`);
  await pipeline(
    tarArchive(sorted),
    measure(uncompressedHash, uncompressed),
    createGzip(),
    measure(compressedHash, compressed),
    createWriteStream(partial),
  );
  const hex = compressedHash.digest('hex');
  const path = join(dir, hex);
  await rename(partial, path);
  return {
    digest: `sha256:${hex}`,
    diffId: `sha256:${uncompressedHash.digest('hex')}`,
    size: compressed.bytes,
    uncompressedSize: uncompressed.bytes,
    path,
    entries: sorted,
  };
}
