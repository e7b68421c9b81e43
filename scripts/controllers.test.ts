import { workspaceControllers } from '@loopwright/cluster';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

test('scripts/controllers.ts prints the workspace controllers as one JSON line, with Node alone', async () => {
  // No --conditions=development, no NODE_OPTIONS: as the images workflow runs it, before any install.
  const { stdout } = await promisify(execFile)(process.execPath, ['controllers.ts'], {
    cwd: import.meta.dirname,
    env: { PATH: '/usr/bin:/bin' },
  });
  assert.equal(stdout, `${JSON.stringify(workspaceControllers().map(({ name }) => name))}\n`);
});
