/**
 * runController before any cluster access: --help, --version, and bad arguments, values and kubeconfigs,
 * and a value its start refuses.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { clientRateLimit } from './run-controller.ts';

const fixture = fileURLToPath(new URL('./run-controller.test-support.ts', import.meta.url));
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
      [
        ['--sharding=true'],
        { LEADER_ELECT: 'true' },
        '--sharding and LEADER_ELECT: sharding replaces leader election (every replica is active): leave --leader-elect unset or false',
      ],
      [
        [],
        { SHARDING: 'true', SHARDING_RING: 'ring/1' },
        `SHARDING_RING: expected a label value (at most 63 letters, digits, '-', '_' or '.', alphanumeric at both ends), got "ring/1"`,
      ],
    ];
    for (const [args, env, message] of cases)
      assert.deepEqual(
        run(args, env),
        { status: 2, stdout: '', stderr: `fixture: ${message} (see --help)\n` },
        message,
      );
  });

  it('a kubeconfig that cannot be loaded: exit 2, one line naming the option as set, no stack trace', () => {
    assert.deepEqual(run([]), {
      status: 2,
      stdout: '',
      stderr: 'fixture: KUBECONFIG: none of its files exist ("/nonexistent/kubeconfig") (see --help)\n',
    });
    // None given, and none of the defaults applies: both names, as for any missing value.
    const none = run([], { KUBECONFIG: ' ', HOME: '/nonexistent/home' });
    assert.equal(none.status, 2);
    assert.match(
      none.stderr,
      /^fixture: --kubeconfig \/ KUBECONFIG: no Kubernetes configuration found; tried: [^\n]*\/nonexistent\/home\/\.kube\/config \(does not exist\) \(see --help\)\n$/,
    );
  });

  it("a value the program's start refuses: exit 2, one line naming it as set", () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-controller-test-'));
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]',
          'users: [{ name: u, user: { token: t } }]',
          'contexts: [{ name: x, context: { cluster: c, user: u } }]',
          'current-context: x',
        ].join('\n'),
      );
      const env = { KUBECONFIG: kubeconfig, LOG_FORMAT: 'json', HEALTH_PROBE_BIND_ADDRESS: '0' };
      const fromVariable = run([], { ...env, GREETING: 'refused' });
      assert.deepEqual(
        { status: fromVariable.status, stderr: fromVariable.stderr },
        { status: 2, stderr: 'fixture: GREETING: refused at start-up (see --help)\n' },
      );
      const fromFlag = run(['--greeting=refused'], env);
      assert.deepEqual(
        { status: fromFlag.status, stderr: fromFlag.stderr },
        { status: 2, stderr: 'fixture: --greeting: refused at start-up (see --help)\n' },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('clientRateLimit', () => {
  it('-1: no client-side limiter (the default); a positive qps: a bucket with the burst', () => {
    assert.equal(clientRateLimit({ kubeApiQps: -1, kubeApiBurst: 1000 }), false);
    assert.deepEqual(clientRateLimit({ kubeApiQps: 50, kubeApiBurst: 80 }), { qps: 50, burst: 80 });
  });
});
