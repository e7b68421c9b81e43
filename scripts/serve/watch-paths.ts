/**
 * What a controller's `serve` script (`pnpm nx serve <controller>`) watches: its own src/ and the src/ of
 * every workspace package it depends on, transitively, one `--watch-path` each. Plain `node --watch`
 * watches every module the program imports, node_modules included, and inotify reports an attribute
 * change of a file there (a hard link pnpm makes of the same store file for another install changes its
 * link count) as a change: the controller restarted though nobody edited anything. `--watch-path` turns
 * that off and watches only the given directories.
 *
 * The list is written out in each package.json, not computed by a launcher, so the script stays one
 * `exec node ...` (see link-bin.sh for why Node must be the process a signal reaches);
 * serve-watch.test.ts and the generator's tests compare each script with `serveScript` below.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const repoRoot = join(import.meta.dirname, '..', '..');

interface Manifest {
  name?: string;
  dependencies?: Record<string, string>;
}

function readManifest(packageDir: string): Manifest | undefined {
  const path = join(packageDir, 'package.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Manifest) : undefined;
}

/** The workspace dependencies among `dependencies`: those of the `workspace:` protocol. */
function workspaceDependencies(dependencies: Record<string, string> | undefined): string[] {
  return Object.entries(dependencies ?? {})
    .filter(([, version]) => version.startsWith('workspace:'))
    .map(([name]) => name);
}

/**
 * The directories `serve` watches for the package at `packageDir` (which need not exist yet, as for a
 * controller being generated) whose package.json `dependencies` are `dependencies`, relative to
 * `packageDir`: `src` first, then the others sorted. Only `dependencies` count: they are what the
 * program can import; devDependencies serve its tests and benchmarks.
 */
export function serveWatchPaths(
  packageDir: string,
  dependencies: Record<string, string> | undefined,
  root: string = repoRoot,
): string[] {
  const packagesDir = join(root, 'packages');
  const dirOf = new Map<string, { dir: string; manifest: Manifest }>();
  for (const name of readdirSync(packagesDir)) {
    const manifest = readManifest(join(packagesDir, name));
    if (typeof manifest?.name === 'string')
      dirOf.set(manifest.name, { dir: join(packagesDir, name), manifest });
  }
  const reached = new Set<string>();
  const pending = workspaceDependencies(dependencies);
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const found = dirOf.get(name);
    if (!found) throw new Error(`${name}: a workspace dependency that is no package under ${packagesDir}`);
    if (reached.has(found.dir)) continue;
    reached.add(found.dir);
    pending.push(...workspaceDependencies(found.manifest.dependencies));
  }
  const dependencyPaths = [...reached].map((dir) => relative(packageDir, join(dir, 'src'))).sort();
  return ['src', ...dependencyPaths];
}

/** The `serve` script that watches `watchPaths` and runs the controller's src/main.ts from source. */
export function serveScript(watchPaths: readonly string[]): string {
  const watch = watchPaths.map((path) => `--watch-path=${path}`).join(' ');
  return `exec node --conditions=development ${watch} src/main.ts`;
}
