/**
 * The command-line tools set-up leaves a user: the pinned helm, and a kubectl of the test control plane's
 * Kubernetes release, as `pnpm helm` and `pnpm kubectl` from the repository (node_modules/.bin, linked by
 * scripts/link-bin.sh) and in the directory whose PATH line set-up prints.
 */
import { commandLineToolsDir, helm } from '@loopwright/cluster';
import { pinnedTools } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot } from './charts.ts';

const run = promisify(execFile);

test('the pinned helm builds from the test tools module and reports its release version', async () => {
  const { stdout } = await helm(['version', '--template', '{{ .Version }}']);
  assert.equal(stdout.trim(), (await pinnedTools()).helm);
});

test('`pnpm helm` and `pnpm kubectl` run the pinned helm and the control plane release’s kubectl', async () => {
  const pinned = await pinnedTools();
  const helmVersion = await run('pnpm', ['-s', 'helm', 'version', '--template', '{{ .Version }}'], {
    cwd: repoRoot,
  });
  assert.equal(helmVersion.stdout.trim(), pinned.helm);
  const kubectlVersion = await run('pnpm', ['-s', 'kubectl', 'version', '--client', '--output=json'], {
    cwd: repoRoot,
  });
  const { clientVersion } = JSON.parse(kubectlVersion.stdout) as { clientVersion: { gitVersion: string } };
  assert.equal(clientVersion.gitVersion, pinned.kubernetes);
});

test('the directory of the PATH line set-up prints holds both', async () => {
  const pinned = await pinnedTools();
  const dir = commandLineToolsDir();
  const helmVersion = await run(join(dir, 'helm'), ['version', '--template', '{{ .Version }}']);
  assert.equal(helmVersion.stdout.trim(), pinned.helm);
  const kubectlVersion = await run(join(dir, 'kubectl'), ['version', '--client', '--output=json']);
  assert.match(
    kubectlVersion.stdout,
    new RegExp(`"gitVersion": "${pinned.kubernetes.replaceAll('.', '\\.')}"`),
  );
});
