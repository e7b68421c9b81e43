import { workspaceControllers } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const repoRoot = join(import.meta.dirname, '..');

/** Starts `command` with a Node program that exits 0 on SIGTERM, sends SIGTERM to the started PID. */
async function terminate(command: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const program =
    'process.on("SIGTERM", () => { console.log("graceful"); process.exit(0); });' +
    'console.log("ready"); setInterval(() => {}, 1000);';
  const child = spawn(command, [...args, '-e', program], { cwd: repoRoot });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  while (!out.includes('ready')) await once(child.stdout, 'data');
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, out };
}

describe("pnpm's node", () => {
  it('is the Node binary itself, so a SIGTERM sent to its PID reaches the program', async () => {
    const { code, out } = await terminate(join(repoRoot, 'node_modules/.bin/node'), []);
    assert.match(out, /graceful/);
    assert.equal(code, 0);
  });

  for (const { name, packageDir } of workspaceControllers(repoRoot)) {
    it(`${name}'s serve script execs Node, so Nx's SIGTERM reaches the controller`, () => {
      const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      };
      assert.match(manifest.scripts.serve ?? '', /^exec node /);
    });
  }
});
