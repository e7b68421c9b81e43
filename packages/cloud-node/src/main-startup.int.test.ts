/**
 * The cloud-node process (main.ts, spawned) on the real control plane while the fake Hetzner API fails
 * its first start-up requests: a pod would crash-loop if the process exited here. It must stay up and
 * unready, say why (log lines and a Warning Event on its Pod), and start normally once the API answers.
 */
import { KubeClient, type EventsV1Event, type Resource } from '@loopwright/runtime';
import { eventually, freeLoopbackPort, loadTestKubeConfig } from '@loopwright/envtest';
import { startFakeHcloud, type FakeHcloud } from '@loopwright/fakes/hcloud';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { EVENTS } from './cloud-node-controllers.test-support.ts';
import { UNINITIALIZED_TAINT } from './names.ts';
import { NODES, type Node } from './node.ts';
import { EventReason } from './reasons.ts';

const MAIN = new URL('./main.ts', import.meta.url).pathname;
const RUN = randomBytes(3).toString('hex');
const RUN_LABEL = 'loopwright.dev/cloud-node-startup-test';
const POD = `cloud-node-startup-${RUN}`;
const NODE = `cn-startup-${RUN}`;

describe('cloud-node process start-up while the Hetzner API fails', () => {
  let fake: FakeHcloud;
  let kube: KubeClient;
  let nodes: Resource<Node>;
  let child: ChildProcess | undefined;
  let stdout = '';
  let exitCode: number | null | undefined;
  let healthPort: number;
  let metricsPort: number;

  before(async () => {
    fake = await startFakeHcloud();
    kube = new KubeClient(loadTestKubeConfig(), { rateLimit: false });
    nodes = kube.resource<Node>(NODES);
    healthPort = await freeLoopbackPort();
    metricsPort = await freeLoopbackPort();
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await nodes.delete({ name: NODE });
    await kube.close();
    await fake.close();
  });

  const readyz = async (): Promise<number | 'down'> => {
    try {
      return (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status;
    } catch {
      return 'down'; // between the start-up server and the Manager's
    }
  };
  const podEvents = async (): Promise<EventsV1Event[]> =>
    (await kube.resource<EventsV1Event>(EVENTS).list({ namespace: 'default' })).items.filter(
      (e) => e.regarding.kind === 'Pod' && e.regarding.name === POD,
    );

  it('stays up and unready with a Warning Event, then initialises a Node once the API answers', async () => {
    const server = fake.servers.add({ name: NODE });
    await nodes.create({
      metadata: { name: NODE, labels: { [RUN_LABEL]: RUN } },
      spec: { taints: [{ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' }] },
    });
    // The first three start-up requests fail, each in its own way; the fourth is answered.
    fake.faults.next({ status: 503 });
    fake.faults.connectionReset();
    fake.faults.next({ status: 200, body: '{"locations": [' });

    const proc = spawn(process.execPath, ['--conditions=development', MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        KUBECONFIG: process.env.KUBECONFIG ?? '',
        HCLOUD_TOKEN: fake.token,
        HCLOUD_ENDPOINT: fake.url,
        HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${healthPort}`,
        // Apart from the probes, as the chart has them (8080, 8081).
        METRICS_BIND_ADDRESS: `127.0.0.1:${metricsPort}`,
        LEADER_ELECT: 'false',
        NODE_SELECTOR: `${RUN_LABEL}=${RUN}`,
        POD_NAME: POD,
        POD_NAMESPACE: 'default',
        LOG_FORMAT: 'json',
      },
    });
    child = proc;
    proc.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    proc.stderr.on('data', (data: Buffer) => (stdout += data.toString()));
    proc.on('exit', (code) => (exitCode = code));

    await eventually(async () => {
      assert.equal(await readyz(), 503);
    });
    await eventually(
      async () => {
        const warnings = (await podEvents()).filter(
          (e) => e.type === 'Warning' && e.reason === EventReason.HcloudAPIError,
        );
        assert.ok(
          warnings.some((e) => /^cannot check the token at http.*503 unavailable/.test(e.note ?? '')),
          `a Warning Event about the Pod naming the 503: ${JSON.stringify(warnings)}`,
        );
      },
      { timeoutMs: 15_000 },
    );
    // What start-up counted is scraped while it waits, on the metrics address.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    assert.match(metrics, /^hcloud_api_requests_total\{[^}]*code="503"[^}]*\} 1$/m);
    while (fake.faults.pending() > 0) {
      assert.notEqual(await readyz(), 200, 'never ready while the API fails');
      assert.equal(exitCode, undefined, `exited while the API fails:\n${stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    await eventually(
      async () => {
        assert.equal(await readyz(), 200);
      },
      { timeoutMs: 20_000 },
    );
    await eventually(
      async () => {
        const node = await nodes.get({ name: NODE });
        assert.equal(node.spec?.providerID, `hcloud://${server.id}`);
        assert.ok(!(node.spec.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT));
      },
      { timeoutMs: 15_000 },
    );
    // main.ts registers cloud-node's own gauges once the controllers run; the Node counts no more.
    await eventually(async () => {
      const served = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.match(served, /^loopwright_nodes_uninitialized 0$/m);
      assert.match(served, /^loopwright_node_uninitialized_oldest_seconds 0$/m);
    });
    const retryLines = stdout
      .split('\n')
      .filter((line) => line.includes('Hetzner Cloud API not usable at start-up'));
    assert.deepEqual(
      retryLines.map((line) => (JSON.parse(line) as { code: string; attempt: number }).code),
      ['unavailable', 'network_error', 'invalid_response'],
      'one log line per failed attempt',
    );
    assert.equal(exitCode, undefined, stdout);
  });
});
