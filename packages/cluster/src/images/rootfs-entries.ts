/** Helpers for the stand-in base images' file systems, which are written entry by entry. */
import { readlink, lstat, stat } from 'node:fs/promises';
import { posix } from 'node:path';
import type { TarEntry } from './tar.ts';

const root = { uid: 0, gid: 0 };

export function directory(path: string, mode = 0o755, owner = root): TarEntry {
  return { type: 'directory', path, mode, ...owner };
}

export function textFile(path: string, text: string, mode = 0o644): TarEntry {
  const content = Buffer.from(text);
  return { type: 'file', path, mode, size: content.length, content, ...root };
}

/** A host file's contents (symlinks followed) at `path` in the image, root-owned with the host's mode. */
export async function hostFile(hostPath: string, path: string): Promise<TarEntry> {
  const info = await stat(hostPath);
  if (!info.isFile()) throw new Error(`${hostPath} is not a file`);
  return { type: 'file', path, mode: info.mode & 0o7777, size: info.size, content: { hostPath }, ...root };
}

/**
 * A host file at the same path in the image, and every symlink on the way to it, each link kept as a
 * link: `/lib64/ld-linux-x86-64.so.2` → `/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2` arrives as the link
 * and its target, so the path the binary names and the file both exist. Only the last component is
 * followed: directories are created in the image as real directories (no merged /usr).
 */
export async function hostFileWithLinks(absolutePath: string): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  const seen = new Set<string>();
  for (let current = absolutePath; ;) {
    if (seen.has(current)) throw new Error(`${absolutePath}: symlink loop`);
    seen.add(current);
    const info = await lstat(current);
    const path = current.replace(/^\/+/, '');
    if (!info.isSymbolicLink()) {
      entries.push(await hostFile(current, path));
      return entries;
    }
    const target = await readlink(current);
    entries.push({ type: 'symlink', path, target, ...root });
    current = posix.resolve(posix.dirname(current), target);
  }
}

/** The directory entries `entries` need and do not list, root-owned 0755. */
export function withParents(entries: readonly TarEntry[]): TarEntry[] {
  const listed = new Map(entries.map((entry) => [entry.path, entry]));
  for (const entry of entries) {
    for (let dir = posix.dirname(entry.path); dir !== '.'; dir = posix.dirname(dir)) {
      if (!listed.has(dir)) listed.set(dir, directory(dir));
    }
  }
  return [...listed.values()];
}
