/** runController before any cluster access: --help, --version, and bad arguments, values and kubeconfigs. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { clientRateLimit } from './run-controller.ts';

const fixture = fileURLToPath(new URL('./run-controller.fixture.ts', import.meta.url));
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

function run(
  args: string[],
  env: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync(
    process.execPath,
    ['--conditions=development', fixture, ...args],
    {
      env: { PATH: process.env.PATH ?? '', KUBECONFIG: '/nonexistent/kubeconfig', ...env },
      encoding: 'utf8',
    },
  );
  return { status, stdout, stderr };
}

describe('runController', () => {
  it('--help: the generated help on stdout, exit 0, before reading any value', () => {
    const { status, stdout, stderr } = run(['--help'], { WORKERS: 'many' });
    assert.equal(stderr, '');
    assert.equal(status, 0);
    assert.match(stdout, /^fixture \d+\.\d+\.\d+: .*\n\nUsage: fixture \[flags\]\n/);
    assert.match(stdout, /^ {2}--greeting <string> {2}\(GREETING\)$/m);
    assert.match(stdout, /^ {2}--watch-namespace <name>\[,\.\.\.\] {2}\(WATCH_NAMESPACE\)$/m);
  });

  it('--version: "<name> <version>", exit 0', () => {
    assert.deepEqual(run(['--version']), { status: 0, stdout: `fixture ${version}\n`, stderr: '' });
  });

  it('a bad argument or value: exit 2, one line naming the flag or variable that was set', () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['--verbose'], {}, '--verbose: unknown argument'],
      [['--greeting'], {}, '--greeting: needs a value'],
      [['--workers=0'], { WORKERS: '3' }, '--workers: expected an integer from 1 to 1000, got "0"'],
      [[], { WORKERS: 'many' }, 'WORKERS: expected an integer from 1 to 1000, got "many"'],
      // Each of these used to be accepted, then crash or fail forever once running.
      [
        [],
        { POD_NAME: 'p'.repeat(129) },
        `POD_NAME: expected a DNS-1123 subdomain (at most 128 characters), got "${'p'.repeat(129)}"`,
      ],
      [
        [],
        { LEADER_ELECTION_ID: 'Bad Lease!' },
        'LEADER_ELECTION_ID: expected a DNS-1123 subdomain (at most 253 characters), got "Bad Lease!"',
      ],
      [
        [],
        { POD_NAMESPACE: 'Ops' },
        'POD_NAMESPACE: expected a DNS-1123 label (at most 63 characters), got "Ops"',
      ],
      [[], { LOG_FORMAT: 'text' }, 'LOG_FORMAT: expected one of json, console, got "text"'],
    ];
    for (const [args, env, message] of cases)
      assert.deepEqual(
        run(args, env),
        { status: 2, stdout: '', stderr: `fixture: ${message} (see --help)\n` },
        message,
      );
  });

  it('a kubeconfig that cannot be loaded: exit 1, one line, no stack trace', () => {
    const fromVariable = run([]);
    assert.equal(fromVariable.status, 1);
    assert.match(
      fromVariable.stderr,
      /^fixture: KUBECONFIG=\/nonexistent\/kubeconfig: none of its files exist\n$/,
    );
    // The flag is one file, and wins over the variable.
    const fromFlag = run(['--kubeconfig', '/nonexistent/flag']);
    assert.equal(fromFlag.status, 1);
    assert.equal(fromFlag.stderr, 'fixture: --kubeconfig /nonexistent/flag does not exist\n');
  });
});

describe('clientRateLimit', () => {
  it('-1: no client-side limiter (the default); a positive qps: a bucket with the burst', () => {
    assert.equal(clientRateLimit({ kubeApiQps: -1, kubeApiBurst: 1000 }), false);
    assert.deepEqual(clientRateLimit({ kubeApiQps: 50, kubeApiBurst: 80 }), { qps: 50, burst: 80 });
  });
});
