/**
 * The controller phase's process, bundled as the released program is: scripts/bundle.ts, which builds
 * the image, with bench/controller-process.ts as its entry in place of src/main.ts. Run from the sources
 * instead (Node's type stripping, and @kubernetes/client-node's index loading every generated model), the
 * controller starts with a 38 MB heap where the bundle has 10 MB, so each of its major GCs marks four
 * times as much, and its pauses land in the lateness the bench measures.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRY = fileURLToPath(new URL('./controller-process.ts', import.meta.url));

export interface ControllerBundle {
  /** The bundle's entry module, to fork. */
  main: string;
  remove(): Promise<void>;
}

export function bundleControllerProcess(): Promise<ControllerBundle> {
  return bundle(['--entry', ENTRY]);
}

/** The released program itself (src/main.ts), as the image holds it: for benches that run whole replicas. */
export function bundleReleasedProgram(): Promise<ControllerBundle> {
  return bundle([]);
}

async function bundle(entryArgs: string[]): Promise<ControllerBundle> {
  const dir = await mkdtemp(join(tmpdir(), 'at-bench-controller-'));
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    const outDir = join(dir, 'bundle');
    await run(process.execPath, [join(repoRoot, 'scripts/bundle.ts'), 'at-scheduler', outDir, ...entryArgs]);
    return { main: join(outDir, 'dist/main.js'), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
