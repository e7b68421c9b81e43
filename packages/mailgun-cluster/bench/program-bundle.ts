/**
 * The released program as the image holds it: scripts/bundle.ts (which builds the image) run on
 * mailgun-cluster, src/main.ts bundled by esbuild. The replicas run this file, not the sources, so each
 * starts and runs as a pod's container does (a bundle's heap and start-up, not type stripping's).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export interface ProgramBundle {
  /** The bundle's entry module, `dist/main.js`. */
  main: string;
  remove(): Promise<void>;
}

export async function bundleReleasedProgram(): Promise<ProgramBundle> {
  const dir = await mkdtemp(join(tmpdir(), 'mailgun-bench-program-'));
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    await run(process.execPath, [join(repoRoot, 'scripts/bundle.ts'), 'mailgun-cluster', dir]);
    return { main: join(dir, 'dist/main.js'), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
