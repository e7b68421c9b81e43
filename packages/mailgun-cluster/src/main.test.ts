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

/** Runs main.ts with no configuration and a kubeconfig that does not exist. */
function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return runWith({}, ...args);
}

function runWith(
  env: Record<string, string>,
  ...args: string[]
): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync(
    process.execPath,
    ['--conditions=development', MAIN, ...args],
    {
      env: { PATH: process.env.PATH ?? '', KUBECONFIG: '/nonexistent/kubeconfig', ...env },
      encoding: 'utf8',
    },
  );
  return { status, stdout, stderr };
}

describe('mailgun-cluster command line', () => {
  it('--help: exit 0, every variable the controller reads, one per line', () => {
    const { status, stdout, stderr } = run('--help');
    assert.equal(status, 0, stderr);
    assert.equal(stderr, '');
    assert.match(stdout, /^Usage: mailgun-cluster \[flags\]$/m);
    for (const { name } of [...VARIABLES, ...KUBE_CONFIG_VARIABLES])
      assert.match(stdout, new RegExp(`^ {2}${name} `, 'm'), name);
  });

  it('--version: exit 0, "<name> <version>" from package.json', () => {
    assert.deepEqual(run('--version'), { status: 0, stdout: `mailgun-cluster ${version}\n`, stderr: '' });
  });

  it('an unknown argument: exit 2, one line naming it', () => {
    assert.deepEqual(run('--leader-elect'), {
      status: 2,
      stdout: '',
      stderr: 'mailgun-cluster: unknown argument "--leader-elect" (see --help)\n',
    });
  });

  it('without arguments the configuration is read: a missing variable still exits 1 naming it', () => {
    const { status, stderr } = run();
    assert.equal(status, 1);
    assert.match(stderr, /^mailgun-cluster: invalid configuration: MAILGUN_DOMAIN: required[^\n]*\n$/);
  });

  it('a kubeconfig that cannot be loaded: exit 1, one line, no stack trace', () => {
    const { status, stdout, stderr } = runWith({
      MAILGUN_DOMAIN: 'mg.example.com',
      MAILGUN_API_KEY: 'key-test',
      MAIL_RECIPIENT: 'ops@example.com',
      LEADER_ELECTION: 'false',
    });
    assert.equal(status, 1);
    assert.equal(stdout, '');
    assert.match(stderr, /^mailgun-cluster: [^\n]*\/nonexistent\/kubeconfig[^\n]*\n$/);
  });
});
