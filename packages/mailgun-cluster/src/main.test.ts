/**
 * The program's command line: --help and --version exit 0 before any configuration or cluster access;
 * a missing value exits 2 with one line naming it, also in the environment the integration tests give it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { MailgunPeer } from '@loopwright/fakes/mailgun';
import { API_KEY, controllerEnv, startController } from './controller-suite.test-support.ts';

const MAIN = new URL('./main.ts', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

function run(
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
  it('--help: exit 0, its own flags and the standard ones', () => {
    const { status, stdout, stderr } = run({}, '--help');
    assert.equal(status, 0, stderr);
    assert.equal(stderr, '');
    assert.match(stdout, /^Usage: mailgun-cluster \[flags\]$/m);
    assert.match(stdout, /^ {2}--mailgun-api-key-file <path> {2}\(MAILGUN_API_KEY_FILE\)$/m);
    assert.match(stdout, /^ {2}--mailgun-timeout <duration> {2}\(MAILGUN_TIMEOUT\)$/m);
    assert.match(stdout, /^ {2}--kube-api-qps <qps> {2}\(KUBE_API_QPS\)$/m);
  });

  it('--version: exit 0, "<name> <version>" from package.json', () => {
    assert.deepEqual(run({}, '--version'), { status: 0, stdout: `mailgun-cluster ${version}\n`, stderr: '' });
  });

  it('a missing or bad value: exit 2, one line naming it', () => {
    assert.deepEqual(run({}), {
      status: 2,
      stdout: '',
      stderr:
        'mailgun-cluster: --mailgun-domain / MAILGUN_DOMAIN: required: the Mailgun sending domain (a domain name such as mg.example.com) (see --help)\n',
    });
  });

  it('a kubeconfig that does not exist: a bad value like any other, exit 2, one line naming it', () => {
    assert.deepEqual(
      run({
        MAILGUN_DOMAIN: 'mg.example.com',
        MAILGUN_API_KEY: 'key-test',
        MAIL_RECIPIENT: 'ops@example.com',
      }),
      {
        status: 2,
        stdout: '',
        stderr:
          'mailgun-cluster: KUBECONFIG: none of its files exist ("/nonexistent/kubeconfig") (see --help)\n',
      },
    );
  });
});

describe('configuration', () => {
  it('a missing variable exits 2 with one line naming it', async () => {
    const env = controllerEnv({ url: 'http://127.0.0.1:1' } as MailgunPeer, 'default');
    const controller = startController({ ...env, MAIL_RECIPIENT: '' });
    const exit = await controller.exited;
    assert.equal(exit.code, 2);
    const lines = controller.output().trim().split('\n');
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /^mailgun-cluster: --mail-recipient \/ MAIL_RECIPIENT: required/);
    assert.equal(controller.output().includes(API_KEY), false);
  });
});
