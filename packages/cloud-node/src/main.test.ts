/**
 * The process's command line (--help, --version: exit 0 before any configuration or cluster access; a bad
 * argument or value: exit 2, one line naming it) and its start-up failures: a value the API rejects is a
 * bad value too, exit 2 and one line naming it as set; a failing API is waited for
 * (main-startup.int.test.ts).
 */
import { startFakeHcloud } from '@loopwright/fakes/hcloud';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { program } from './config.ts';

const MAIN = new URL('./main.ts', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'cloud-node-main-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: kube-token}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`,
);

function start(
  env: Record<string, string>,
  args: string[] = [],
): { child: ChildProcess; output: { stdout: string; stderr: string }; done: Promise<number | null> } {
  const child = spawn(process.execPath, ['--conditions=development', MAIN, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: kubeconfig,
      LOG_FORMAT: 'json',
      HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
      METRICS_BIND_ADDRESS: '0',
      ...env,
    },
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output.stderr += d.toString()));
  const done = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, output, done };
}

async function run(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { output, done } = start(env, args);
  const code = await done;
  return { code, ...output };
}

describe('main command line', () => {
  // No token and a kubeconfig that does not exist: any configuration or cluster access would fail.
  const unconfigured = { KUBECONFIG: join(dir, 'missing') };

  it('--help: exit 0, its own flags with their variables (HCCM names), and the standard ones', async () => {
    const { code, stdout, stderr } = await run(unconfigured, ['--help']);
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
    assert.match(stdout, /^Usage: cloud-node \[flags\]$/m);
    for (const declared of Object.values(program.options)) {
      const [flag, variable] =
        declared.type === 'option'
          ? [declared.flag, declared.variable]
          : [declared.fileFlag, declared.fileVariable];
      assert.match(stdout, new RegExp(`^ {2}${flag}( \\S+)? {2}\\(${variable}\\)$`, 'm'), flag);
    }
    assert.match(stdout, /^ {2}--node-monitor-period <duration> {2}\(NODE_MONITOR_PERIOD\)$/m);
    assert.match(stdout, /^ {2}--leader-elect {2}\(LEADER_ELECT\)$/m);
  });

  it('--version: exit 0, "<name> <version>" from package.json', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    assert.deepEqual(await run(unconfigured, ['--version']), {
      code: 0,
      stdout: `cloud-node ${version}\n`,
      stderr: '',
    });
  });

  it('an unknown argument or a flag without its value: exit 2, one line naming it', async () => {
    assert.deepEqual(await run(unconfigured, ['--cloud-provider=hcloud']), {
      code: 2,
      stdout: '',
      stderr: 'cloud-node: --cloud-provider: unknown argument (see --help)\n',
    });
    assert.deepEqual(await run(unconfigured, ['--node-selector']), {
      code: 2,
      stdout: '',
      stderr: 'cloud-node: --node-selector: needs a value (see --help)\n',
    });
  });

  it('a malformed flag value: exit 2 naming the flag', async () => {
    const { code, stderr } = await run({ HCLOUD_TOKEN: 'x'.repeat(64) }, ['--node-monitor-period', 'soon']);
    assert.equal(code, 2);
    assert.match(stderr, /^cloud-node: --node-monitor-period: expected a duration[^\n]*\n$/);
  });
});

describe('main start-up failures', () => {
  it('missing token: exit 2, one line naming HCLOUD_TOKEN', async () => {
    const { code, stderr } = await run({});
    assert.equal(code, 2);
    assert.match(stderr, /^cloud-node: HCLOUD_TOKEN \/ HCLOUD_TOKEN_FILE: required[^\n]*\n$/);
  });

  it('malformed variable: exit 2, one line naming it', async () => {
    const { code, stderr } = await run({
      HCLOUD_TOKEN: 'x'.repeat(64),
      HCLOUD_INSTANCES_ADDRESS_FAMILY: 'ipv5',
    });
    assert.equal(code, 2);
    assert.equal(
      stderr,
      'cloud-node: HCLOUD_INSTANCES_ADDRESS_FAMILY: expected one of ipv4, ipv6, dualstack, got "ipv5" (see --help)\n',
    );
  });

  it('a token the API rejects: exit 2 after one request, the token nowhere in the output', async () => {
    const fake = await startFakeHcloud();
    try {
      const badToken = 'bad-token-0123456789abcdef0123456789abcdef0123456789abcdef01234567';
      const { code, stdout, stderr } = await run({
        HCLOUD_TOKEN: badToken,
        HCLOUD_ENDPOINT: fake.url,
        HCLOUD_DEBUG: 'true',
      });
      assert.equal(code, 2);
      assert.match(
        stderr,
        /^cloud-node: HCLOUD_TOKEN: the Hetzner Cloud API rejected the token \(401 unauthorized[^\n]*\(see --help\)\n$/,
      );
      assert.equal(fake.requests.count(), 1);
      assert.ok(!stdout.includes(badToken) && !stderr.includes(badToken));
      assert.match(stdout, /target cluster/); // the context is printed first
    } finally {
      await fake.close();
    }
  });

  it('a 401 after a transient failure still exits 2: a token that never worked is a bad value', async () => {
    const fake = await startFakeHcloud();
    try {
      fake.faults.next({ status: 503 });
      fake.faults.next({ status: 401 });
      const { code, stdout, stderr } = await run({ HCLOUD_TOKEN: fake.token, HCLOUD_ENDPOINT: fake.url });
      assert.equal(code, 2);
      assert.match(
        stderr,
        /^cloud-node: HCLOUD_TOKEN: the Hetzner Cloud API rejected the token \(401 unauthorized/,
      );
      assert.match(stdout, /Hetzner Cloud API not usable at start-up/);
      assert.equal(fake.requests.count(), 2);
    } finally {
      await fake.close();
    }
  });

  it('SIGTERM while start-up waits for a failing API: exit 0', async () => {
    const fake = await startFakeHcloud();
    try {
      fake.faults.next({ status: 503, times: 100 });
      const { child, output, done } = start({ HCLOUD_TOKEN: fake.token, HCLOUD_ENDPOINT: fake.url });
      while (!output.stdout.includes('Hetzner Cloud API not usable at start-up')) {
        assert.equal(child.exitCode, null, output.stderr);
        await sleep(50);
      }
      child.kill('SIGTERM');
      assert.equal(await done, 0, output.stderr);
      assert.equal(output.stderr, '');
    } finally {
      await fake.close();
    }
  });

  it('a network the API does not know: exit 2, one line naming it as set', async () => {
    const fake = await startFakeHcloud();
    try {
      const env = { HCLOUD_TOKEN: fake.token, HCLOUD_ENDPOINT: fake.url, HCLOUD_NETWORK: 'nope' };
      const fromVariable = await run(env);
      assert.deepEqual(
        { code: fromVariable.code, stderr: fromVariable.stderr },
        {
          code: 2,
          stderr:
            'cloud-node: HCLOUD_NETWORK: no network with id or name "nope" in this project (see --help)\n',
        },
      );
      const fromFlag = await run(env, ['--hcloud-network', 'k8s-nope']);
      assert.deepEqual(
        { code: fromFlag.code, stderr: fromFlag.stderr },
        {
          code: 2,
          stderr:
            'cloud-node: --hcloud-network: no network with id or name "k8s-nope" in this project (see --help)\n',
        },
      );
    } finally {
      await fake.close();
    }
  });
});
