/**
 * The test tools a user runs by hand, helm and kubectl, in one directory of stable paths: set-up prints
 * the line that puts it on PATH, and scripts/link-bin.sh links both into the workspace's
 * node_modules/.bin (`pnpm helm`, `pnpm kubectl`).
 */
import { mkdir, rename, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { goBuildCacheDir, type TestTools } from '@loopwright/envtest';

const commandLineToolNames = ['helm', 'kubectl'] as const;

/** `~/.cache/loopwright/bin` (see goBuildCacheDir for how the cache's root is chosen). */
export function commandLineToolsDir(): string {
  return goBuildCacheDir('bin');
}

/** Points the directory's helm and kubectl at the ones built; returns the directory. */
export async function linkCommandLineTools(tools: Pick<TestTools, 'helm' | 'kubectl'>): Promise<string> {
  const dir = commandLineToolsDir();
  await mkdir(dir, { recursive: true });
  for (const name of commandLineToolNames) {
    // A new link renamed over the old one: a shell running the old one meanwhile never finds none.
    const staged = join(dir, `.${name}-${process.pid}`);
    await symlink(tools[name], staged);
    await rename(staged, join(dir, name));
  }
  return dir;
}
