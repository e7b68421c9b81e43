/** The program's command line: --help and --version exit 0 before any configuration or cluster access. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

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
      env: { PATH: process.env.PATH ?? '', WORKERS: 'many', KUBECONFIG: '/nonexistent/kubeconfig' },
      encoding: 'utf8',
    },
  );
  return { status, stdout, stderr };
}

describe('at-scheduler command line', () => {
  it('--help: exit 0, its own flags and the standard ones', () => {
    const { status, stdout, stderr } = run('--help');
    assert.equal(status, 0, stderr);
    assert.equal(stderr, '');
    assert.match(stdout, /^Usage: at-scheduler \[flags\]$/m);
    assert.match(stdout, /^ {2}--default-image <image> {2}\(DEFAULT_IMAGE\)$/m);
    assert.match(stdout, /^ {2}--watch-namespace <name>\[,\.\.\.\] {2}\(WATCH_NAMESPACE\)$/m);
  });

  it('--version: exit 0, "<name> <version>" from package.json', () => {
    assert.deepEqual(run('--version'), { status: 0, stdout: `at-scheduler ${version}\n`, stderr: '' });
  });

  it('a bad argument or value: exit 2, one line naming it', () => {
    assert.deepEqual(run('--namespace', 'x'), {
      status: 2,
      stdout: '',
      stderr: 'at-scheduler: --namespace: unknown argument (see --help)\n',
    });
    assert.deepEqual(run(), {
      status: 2,
      stdout: '',
      stderr: 'at-scheduler: WORKERS: expected an integer from 1 to 1000, got "many" (see --help)\n',
    });
  });
});
