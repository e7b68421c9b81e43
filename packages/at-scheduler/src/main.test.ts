/** The program's command line: --help and --version exit 0 before any configuration or cluster access. */
import { KUBE_CONFIG_VARIABLES } from '@loopwright/runtime';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { VARIABLES } from './config.ts';

const MAIN = new URL('./main.ts', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Runs main.ts with an environment that would fail configuration and kubeconfig loading. */
function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync(
    process.execPath,
    ['--conditions=development', MAIN, ...args],
    {
      env: { PATH: process.env.PATH ?? '', AT_WORKERS: 'many', KUBECONFIG: '/nonexistent/kubeconfig' },
      encoding: 'utf8',
    },
  );
  return { status, stdout, stderr };
}

describe('at-scheduler command line', () => {
  it('--help: exit 0, every variable the controller reads, one per line', () => {
    const { status, stdout, stderr } = run('--help');
    assert.equal(status, 0, stderr);
    assert.equal(stderr, '');
    assert.match(stdout, /^Usage: at-scheduler \[flags\]$/m);
    for (const { name } of [...VARIABLES, ...KUBE_CONFIG_VARIABLES])
      assert.match(stdout, new RegExp(`^ {2}${name} `, 'm'), name);
  });

  it('--version: exit 0, "<name> <version>" from package.json', () => {
    assert.deepEqual(run('--version'), { status: 0, stdout: `at-scheduler ${version}\n`, stderr: '' });
  });

  it('an unknown argument: exit 2, one line naming it', () => {
    assert.deepEqual(run('--namespace', 'x'), {
      status: 2,
      stdout: '',
      stderr: 'at-scheduler: unknown argument "--namespace" (see --help)\n',
    });
  });

  it('without arguments the configuration is read: a bad variable still exits 1 naming it', () => {
    const { status, stderr } = run();
    assert.equal(status, 1);
    assert.match(stderr, /^AT_WORKERS: expected an integer[^\n]*\n$/);
  });
});
