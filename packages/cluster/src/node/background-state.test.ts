import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { backgroundStatePath, readBackgroundState, writeBackgroundState } from './background-state.ts';

const dir = await mkdtemp(join(tmpdir(), 'background-state-'));
after(() => rm(dir, { recursive: true, force: true }));

test('the cluster and the control plane keep their states apart, at the repository root', () => {
  assert.equal(backgroundStatePath('/repo', true), '/repo/.cluster/state.json');
  assert.equal(backgroundStatePath('/repo', false), '/repo/.controlplane/state.json');
});

test('a state is read back while its supervisor runs; none, or a stale one, reads as undefined', async () => {
  const path = join(dir, 'state.json');
  assert.equal(await readBackgroundState(path), undefined);
  const state = { pid: process.pid, server: 'https://127.0.0.1:6443', kubeconfigPath: '/k' };
  await writeBackgroundState(path, state);
  assert.deepEqual(await readBackgroundState(path), state);
  // A pid no process has (above Linux's pid_max): the supervisor is gone.
  await writeBackgroundState(path, { ...state, pid: 2 ** 22 + 1 });
  assert.equal(await readBackgroundState(path), undefined);
});
