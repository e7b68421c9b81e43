/**
 * A Secret volume as the kubelet writes it (`pkg/volume/util/atomic_writer.go`), for tests of code that
 * must follow a Secret's updates: the files live in a timestamped directory, `..data` is a symlink to
 * it, each visible file a symlink through `..data`. An update writes a new directory and renames a
 * `..data_tmp` symlink onto `..data`: one atomic swap, after which the old directory is removed.
 */
import { mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

let generation = 0;

/** Writes (or atomically replaces) the volume's files in `dir`; returns the visible paths by file name. */
export function writeSecretVolume(
  dir: string,
  files: Readonly<Record<string, string>>,
): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const dataLink = join(dir, '..data');
  const previous = existsSync(dataLink) ? readlinkSync(dataLink) : undefined;
  const timestamped = `..${new Date().toISOString().replace(/[-:.]/g, '_')}.${process.pid}.${generation++}`;
  mkdirSync(join(dir, timestamped));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, timestamped, name), content);
  symlinkSync(timestamped, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), dataLink);
  const paths: Record<string, string> = {};
  for (const name of Object.keys(files)) {
    const visible = join(dir, name);
    if (!existsSync(visible)) symlinkSync(join('..data', name), visible);
    paths[name] = visible;
  }
  if (previous !== undefined) rmSync(join(dir, previous), { recursive: true, force: true });
  return paths;
}
