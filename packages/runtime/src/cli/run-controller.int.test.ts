/**
 * runController on the real control plane: the standard options reach the Manager (probe and metrics
 * addresses, the Lease's namespace and name, this replica's identity), and SIGTERM ends it with 0; a
 * kubeconfig or context the user got wrong exits 2 before anything starts, naming it as set.
 */
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import {
  createTestNamespace,
  eventually,
  freeLoopbackPort,
  loadTestKubeConfig,
  type TestNamespace,
} from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const fixture = fileURLToPath(new URL('./run-controller.test-support.ts', import.meta.url));

function start(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcessByStdio<null, Readable, Readable>; output: () => string } {
  const child = spawn(process.execPath, ['--conditions=development', fixture, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: process.env.KUBECONFIG ?? '',
      LOG_FORMAT: 'json',
      ...env,
    },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function status(port: number, path: string): Promise<number | 'down'> {
  try {
    return (await fetch(`http://127.0.0.1:${port}${path}`)).status;
  } catch {
    return 'down';
  }
}

describe('runController on a cluster', () => {
  let kc: KubeConfig;
  let ns: TestNamespace;
  const children: ChildProcess[] = [];

  before(async () => {
    kc = loadTestKubeConfig();
    ns = await createTestNamespace(kc, 'run-controller');
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await ns.cleanup();
  });

  it('probes and metrics on separate addresses, the cache dump on its own; the Lease named and held as configured; SIGTERM: 0', async () => {
    const [probes, metrics, dump] = [
      await freeLoopbackPort(),
      await freeLoopbackPort(),
      await freeLoopbackPort(),
    ];
    const { child, output } = start(['--metrics-bind-address', `127.0.0.1:${metrics}`, '--greeting=hi'], {
      HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${probes}`,
      CACHE_DUMP_BIND_ADDRESS: `127.0.0.1:${dump}`,
      METRICS_BIND_ADDRESS: '127.0.0.1:1',
      POD_NAME: 'fixture-0',
      POD_NAMESPACE: ns.name,
      LEADER_ELECTION_ID: 'fixture.lease',
      WATCH_NAMESPACE: ns.name,
    });
    children.push(child);
    // Node start-up, the informers' sync and the first Lease round, on a machine that may be busy.
    await eventually(
      async () => {
        assert.equal(await status(probes, '/readyz'), 200, output() || '(no output yet)');
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(await status(probes, '/healthz'), 200);
    assert.equal(await status(probes, '/metrics'), 404, 'metrics have their own address');
    assert.equal(await status(metrics, '/metrics'), 200);
    assert.equal(await status(metrics, '/readyz'), 404);
    // The fixture has no controllers, so no informers: what each holds is cache-dump.test.ts's part.
    const dumped = await fetch(`http://127.0.0.1:${dump}/cache`);
    assert.deepEqual([dumped.status, await dumped.json()], [200, []]);
    await eventually(
      async () => {
        const lease = await kc
          .makeApiClient(CoordinationV1Api)
          .readNamespacedLease({ name: 'fixture.lease', namespace: ns.name });
        assert.equal(lease.spec?.holderIdentity, 'fixture-0', 'POD_NAMESPACE places it, POD_NAME holds it');
      },
      { timeoutMs: 30_000 },
    );
    const started = output()
      .split('\n')
      .filter((line) => line.includes('"started"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      started.map(({ greeting, workers, namespaces, identity }) => ({
        greeting,
        workers,
        namespaces,
        identity,
      })),
      [{ greeting: 'hi', workers: 2, namespaces: [ns.name], identity: 'fixture-0' }],
    );
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, output());
  });

  it('one address for probes and metrics: one server serves all three; no leader election', async () => {
    const port = await freeLoopbackPort();
    const address = `127.0.0.1:${port}`;
    const { child, output } = start(['--leader-elect=false'], {
      HEALTH_PROBE_BIND_ADDRESS: address,
      METRICS_BIND_ADDRESS: address,
    });
    children.push(child);
    await eventually(
      async () => {
        assert.equal(await status(port, '/readyz'), 200, output() || '(no output yet)');
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(await status(port, '/metrics'), 200);
    assert.doesNotMatch(output(), /waiting for leadership/);
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, output());
  });

  it('--sharding=true: a sharded Manager, its member Lease where the leader-election Lease would be, with its durations; no leader election', async () => {
    const port = await freeLoopbackPort();
    const address = `127.0.0.1:${port}`;
    const { child, output } = start(['--sharding=true'], {
      HEALTH_PROBE_BIND_ADDRESS: address,
      METRICS_BIND_ADDRESS: address,
      POD_NAME: 'fixture-sharded-0',
      POD_NAMESPACE: ns.name,
      SHARDING_RING: 'fixture-ring',
      LEADER_ELECT_LEASE_DURATION: '20s',
    });
    children.push(child);
    await eventually(
      async () => {
        assert.equal(await status(port, '/readyz'), 200, output() || '(no output yet)');
      },
      { timeoutMs: 60_000 },
    );
    const coordination = kc.makeApiClient(CoordinationV1Api);
    const members = async () =>
      (
        await coordination.listNamespacedLease({
          namespace: ns.name,
          labelSelector: 'sharding.loopwright.dev/ring=fixture-ring',
        })
      ).items;
    await eventually(
      async () => {
        assert.deepEqual(
          (await members()).map((lease) => [lease.spec?.holderIdentity, lease.spec?.leaseDurationSeconds]),
          [['fixture-sharded-0', 20]],
          'POD_NAMESPACE places it, POD_NAME holds it, LEADER_ELECT_LEASE_DURATION times it',
        );
      },
      { timeoutMs: 30_000 },
    );
    const leases = await coordination.listNamespacedLease({ namespace: ns.name });
    assert.ok(
      leases.items.every((lease) => lease.metadata?.name !== 'fixture'),
      'no leader-election Lease',
    );
    assert.match(output(), /leader election is off, every replica is active/);
    assert.match(output(), /running sharded/);
    assert.doesNotMatch(output(), /waiting for leadership/);
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, output());
    assert.deepEqual(await members(), [], 'it leaves the ring on the way out');
  });

  describe('a kubeconfig or context the user got wrong: exit 2, one line naming the flag or variable set', () => {
    async function exit(
      args: string[],
      env: Record<string, string>,
    ): Promise<{ code: number | null; stderr: string }> {
      const { child } = start(args, env);
      children.push(child);
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      return { code, stderr };
    }
    const kubeconfig = (): string => process.env.KUBECONFIG ?? '';
    const contexts = (): string =>
      kc
        .getContexts()
        .map((context) => context.name)
        .join(', ');

    it('CONTEXT naming a context the kubeconfig lacks', async () => {
      assert.deepEqual(await exit([], { CONTEXT: 'no-such-context' }), {
        code: 2,
        stderr: `fixture: CONTEXT: expected a context of KUBECONFIG "${kubeconfig()}" (${contexts()}), got "no-such-context" (see --help)\n`,
      });
    });

    it('--context naming a context the kubeconfig lacks (the flag wins over CONTEXT)', async () => {
      assert.deepEqual(await exit(['--context', 'no-such-context'], { CONTEXT: kc.getCurrentContext() }), {
        code: 2,
        stderr: `fixture: --context: expected a context of KUBECONFIG "${kubeconfig()}" (${contexts()}), got "no-such-context" (see --help)\n`,
      });
    });

    it('--kubeconfig naming a file that does not exist (the flag wins over KUBECONFIG)', async () => {
      assert.deepEqual(await exit(['--kubeconfig', '/nonexistent/kubeconfig'], {}), {
        code: 2,
        stderr: 'fixture: --kubeconfig: "/nonexistent/kubeconfig" does not exist (see --help)\n',
      });
    });
  });
});
