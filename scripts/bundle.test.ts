/**
 * scripts/bundle.ts's command line. The image's bundle itself (built from src/main.ts, inspected and run)
 * is e2e/src/bundle.test.ts's; this is what the at-scheduler bench relies on: `--entry` builds another
 * entry the same way, and a malformed command line is refused with the usage.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const bundleScript = join(import.meta.dirname, 'bundle.ts');

async function bundleCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bundleScript, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: code ?? -1, stdout, stderr };
  }
}

describe('scripts/bundle.ts', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loopwright-bundle-cli-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('--entry bundles that file in place of src/main.ts, with the controller’s package.json', async () => {
    const entry = join(dir, 'entry.ts');
    // TypeScript and an import of a built-in: bundled as main.js is, it runs with Node alone.
    await writeFile(
      entry,
      "import { basename } from 'node:path';\nconst said: string = `bundled ${basename('/x/entry')}`;\nconsole.log(said);\n",
    );
    const out = join(dir, 'out');
    const built = await bundleCli(['at-scheduler', out, '--entry', entry]);
    assert.equal(built.code, 0, built.stderr);
    const { stdout } = await run(process.execPath, [join(out, 'dist/main.js')], { cwd: dir });
    assert.equal(stdout, 'bundled entry\n');
    const manifest = JSON.parse(await readFile(join(out, 'package.json'), 'utf8')) as { name: string };
    assert.equal(manifest.name, '@loopwright/at-scheduler');
  });

  for (const args of [
    ['at-scheduler'],
    ['at-scheduler', 'out', '--entry'],
    ['at-scheduler', 'out', '--entrypoint', 'x.ts'],
    ['at-scheduler', 'out', '--entry', 'x.ts', 'extra'],
  ])
    it(`refuses ${args.join(' ')} with the usage, exit 2, building nothing`, async () => {
      const refused = await bundleCli(args.map((arg) => (arg === 'out' ? join(dir, 'refused') : arg)));
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /^usage: scripts\/bundle\.ts <controller> <outDir> \[--entry <file/);
      await assert.rejects(readFile(join(dir, 'refused', 'package.json')));
    });
});
