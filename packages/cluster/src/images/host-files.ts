import { lstat, readdir, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { TarEntry } from './tar.ts';

/** Owner of copied files: root, as COPY without --chown leaves them. */
const root = { uid: 0, gid: 0 };

/**
 * The entries of the host directory `hostDir` placed at `targetPath` (relative, e.g. `app`): regular
 * files, directories and symlinks with their modes, owned by root. `targetPath` itself is not listed
 * (the caller decides whether the layer creates it). Hard links become separate files, as a copy makes
 * them; anything else (sockets, devices) throws, since a bundle never holds one.
 */
export async function hostTreeEntries(hostDir: string, targetPath: string): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  for (const dirent of await readdir(hostDir, { recursive: true, withFileTypes: true })) {
    const hostPath = join(dirent.parentPath, dirent.name);
    const relative = hostPath.slice(hostDir.length).replace(/^\/+/, '');
    entries.push(await hostEntry(hostPath, posix.join(targetPath, relative)));
  }
  return entries;
}

/** One host file, directory or symlink (not followed) as a root-owned entry at `path`. */
async function hostEntry(hostPath: string, path: string): Promise<TarEntry> {
  const stat = await lstat(hostPath);
  const mode = stat.mode & 0o7777;
  if (stat.isFile()) return { type: 'file', path, mode, size: stat.size, content: { hostPath }, ...root };
  if (stat.isDirectory()) return { type: 'directory', path, mode, ...root };
  if (stat.isSymbolicLink()) return { type: 'symlink', path, target: await readlink(hostPath), ...root };
  throw new Error(`${hostPath}: neither a file, a directory nor a symlink`);
}
