/**
 * Both controllers on a real kube-apiserver (no kubelet, and no node lifecycle controller in the
 * control plane's controller manager: nothing else touches Nodes) against the fake Hetzner API.
 * Nodes are plain objects created here; their Ready condition is written through nodes/status.
 * Nodes are cluster-scoped, so this file's Nodes carry a run label and the controllers' node selector
 * is set to it: Nodes of other test files are invisible to them (which also exercises the selector).
 */
import { HcloudClient } from '@loopwright/hcloud';
import { createMetrics } from '@loopwright/metrics';
import { KubeClient, Manager, createSilentLogger, isNotFound } from '@loopwright/runtime';
import { reportReady } from './node-status.test-support.ts';
import { eventually, loadTestKubeConfig, startFakeHcloud, type FakeHcloud } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RequestBudget } from './budget.ts';
import { createNodeApi } from './api.ts';
import { createCloudNodeControllers } from './controller.ts';
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from './names.ts';
import type { Node, Taint } from './node.ts';
import { EventReason } from './reasons.ts';
import { ServerDirectory } from './server-directory.ts';

const RUN = randomBytes(3).toString('hex');
const RUN_LABEL = 'loopwright.dev/cloud-node-test';
const MONITOR_MS = 200;
// A few servers, so one page: NotReady Nodes are checked once per sweep period (see notReadyDataMaxAgeMs).
const SWEEP_MS = 1000;
const REFRESH_MS = 2000;

describe('cloud-node controllers on a real control plane', () => {
  let fake: FakeHcloud;
  let kube: KubeClient;
  let stop: () => Promise<void>;
  let networkId: number;
  const created: string[] = [];

  before(async () => {
    fake = await startFakeHcloud();
    networkId = fake.networks.add({ name: 'k8s', ip_range: '10.0.0.0/16' }).id;
    const kc = loadTestKubeConfig();
    kube = new KubeClient(kc, { rateLimit: false });
    const manager = new Manager({
      kubeConfig: kc,
      logger: createSilentLogger(),
      metrics: createMetrics({ defaultMetrics: false }),
      health: false,
      gracefulShutdownTimeoutMs: 5000,
      rateLimit: false,
    });
    const hcloud = new HcloudClient({
      token: fake.token,
      endpoint: fake.url,
      maxRetries: 0,
      maxRateLimitWaitMs: 0,
      timeoutMs: 2000,
    });
    const directory = new ServerDirectory({
      client: hcloud,
      budget: new RequestBudget({ rateLimit: () => hcloud.rateLimit }),
      failureBackoff: { initialMs: 50, maxMs: 400 },
    });
    for (const controller of createCloudNodeControllers({
      api: createNodeApi({
        client: manager.client,
        recorder: manager.eventRecorder('loopwright.dev/cloud-node'),
        directory,
      }),
      addressFamily: 'dualstack',
      networkId,
      zoneLabels: true,
      nodeMonitorPeriodMs: MONITOR_MS,
      notReadySweepPeriodMs: SWEEP_MS,
      nodeStatusUpdateFrequencyMs: REFRESH_MS,
      nodeSelector: `${RUN_LABEL}=${RUN}`,
      initRetryMs: 200,
    }))
      manager.add(controller);
    const abort = new AbortController();
    const done = manager.start(abort.signal);
    stop = async () => {
      abort.abort();
      assert.equal(await done, 'stopped');
    };
  });

  after(async () => {
    await stop();
    for (const name of created)
      await kube.requestJson('DELETE', `/api/v1/nodes/${name}`).catch(() => undefined);
    await kube.close();
    await fake.close();
  });

  async function createNode(
    name: string,
    options: {
      providerID?: string;
      taints?: Taint[];
      ready?: 'True' | 'False' | 'Unknown';
      annotations?: Record<string, string>;
      inRun?: boolean;
    },
  ): Promise<Node> {
    created.push(name);
    const labels = options.inRun === false ? {} : { [RUN_LABEL]: RUN };
    await kube.requestJson('POST', '/api/v1/nodes', {
      body: {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels, annotations: options.annotations ?? {} },
        spec: {
          ...(options.providerID ? { providerID: options.providerID } : {}),
          taints: options.taints ?? [],
        },
      },
    });
    if (options.ready) await setReady(name, options.ready);
    return getNode(name);
  }
  const setReady = (name: string, status: 'True' | 'False' | 'Unknown'): Promise<unknown> =>
    reportReady(kube, name, status, { reason: 'Test' });
  const getNode = (name: string): Promise<Node> => kube.requestJson<Node>('GET', `/api/v1/nodes/${name}`);
  const exists = async (name: string): Promise<boolean> => {
    try {
      await getNode(name);
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  };
  const events = async (name: string): Promise<{ reason: string; type: string; note?: string }[]> =>
    (
      await kube.requestJson<{
        items: { reason: string; type: string; note?: string; regarding: { name: string } }[];
      }>('GET', '/apis/events.k8s.io/v1/namespaces/default/events')
    ).items.filter((e) => e.regarding.name === name);
  const uninitialized: Taint = { key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' };
  const name = (suffix: string): string => `cn-${RUN}-${suffix}`;

  it('a tainted Node becomes initialised: providerID, labels, taint removed, addresses, Synced', async () => {
    const server = fake.servers.add({
      name: name('init'),
      server_type: 'cpx31',
      location: 'fsn1',
      private_net: [{ network: networkId, ip: '10.0.0.7', alias_ips: [], mac_address: '86:00:00:00:00:01' }],
    });
    await createNode(name('init'), { taints: [uninitialized, { key: 'other', effect: 'NoExecute' }] });
    await eventually(async () => {
      const node = await getNode(name('init'));
      assert.equal(node.spec?.providerID, `hcloud://${server.id}`);
      // (the API server's admission adds node.kubernetes.io/not-ready to new Nodes: not ours to judge)
      assert.deepEqual(
        (node.spec.taints ?? []).map((t) => t.key).filter((k) => k !== 'node.kubernetes.io/not-ready'),
        ['other'],
      );
      const labels = node.metadata?.labels ?? {};
      assert.equal(labels['node.kubernetes.io/instance-type'], 'cpx31');
      assert.equal(labels['topology.kubernetes.io/region'], 'fsn1');
      assert.equal(labels['topology.kubernetes.io/zone'], 'fsn1-dc14');
      assert.equal(labels['instance.hetzner.cloud/provided-by'], 'cloud');
      const addresses = node.status?.addresses ?? [];
      assert.deepEqual(
        addresses.map((a) => a.type),
        ['Hostname', 'ExternalIP', 'ExternalIP', 'InternalIP'],
      );
      assert.equal(addresses[3]?.address, '10.0.0.7');
    });
    await eventually(async () => {
      assert.ok(
        (await events(name('init'))).some((e) => e.reason === EventReason.Synced && e.type === 'Normal'),
      );
    });
    // Refresh: a changed IP reaches status.addresses within the refresh period.
    fake.servers.update(server.id, {
      public_net: { ipv4: { id: 1, ip: '5.75.9.9', blocked: false, dns_ptr: 'static.example' } },
    });
    await eventually(
      async () => {
        assert.equal((await getNode(name('init'))).status?.addresses?.[1]?.address, '5.75.9.9');
      },
      { timeoutMs: 4 * REFRESH_MS },
    );
  });

  it('a Node whose server cannot be found keeps its taint and gets a Warning naming the cause', async () => {
    await createNode(name('nosrv'), { taints: [uninitialized] });
    await eventually(async () => {
      assert.ok(
        (await events(name('nosrv'))).some(
          (e) =>
            e.type === 'Warning' &&
            e.reason === EventReason.ServerNotFound &&
            (e.note ?? '').includes(`named "${name('nosrv')}"`),
        ),
      );
    });
    assert.ok((await getNode(name('nosrv'))).spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT));
  });

  it('a provided-node-ip the server does not have fails initialisation with a Warning', async () => {
    fake.servers.add({ name: name('nodeip') });
    await createNode(name('nodeip'), {
      taints: [uninitialized],
      annotations: { 'alpha.kubernetes.io/provided-node-ip': '192.168.77.1' },
    });
    await eventually(async () => {
      assert.ok(
        (await events(name('nodeip'))).some(
          (e) => e.reason === EventReason.ProvidedNodeIPNotFound && (e.note ?? '').includes('192.168.77.1'),
        ),
      );
    });
    assert.equal((await getNode(name('nodeip'))).spec?.providerID, undefined);
  });

  it('a server re-created under the same name: the Node gets the new server, never a cached old one', async () => {
    const old = fake.servers.add({ name: name('recreated') });
    // A Ready Node of the old server keeps address refreshes, and so sweeps, going: wait for a sweep
    // that lists the old server, so the directory holds a snapshot naming it.
    const since = Date.now();
    await createNode(name('recreated-peer'), { providerID: `hcloud://${old.id}`, ready: 'True' });
    await eventually(
      () => {
        assert.ok(fake.requests.count({ endpoint: '/v1/servers', status: 200, since }) > 0);
      },
      { timeoutMs: 4 * REFRESH_MS },
    );
    fake.servers.delete(old.id);
    const fresh = fake.servers.add({ name: name('recreated') });
    await createNode(name('recreated'), { taints: [uninitialized] });
    await eventually(async () => {
      const node = await getNode(name('recreated'));
      assert.equal(
        node.spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT),
        false,
      );
      assert.equal(node.spec.providerID, `hcloud://${fresh.id}`);
      assert.equal(node.status?.addresses?.[1]?.address, fresh.public_net.ipv4?.ip);
    });
  });

  it('an API failure during initialisation is a Warning naming it; the Node is initialised once it heals', async () => {
    const server = fake.servers.add({ name: name('apifail') });
    fake.faults.unauthorized(true);
    try {
      await createNode(name('apifail'), { taints: [uninitialized] });
      await eventually(async () => {
        assert.ok(
          (await events(name('apifail'))).some(
            (e) =>
              e.type === 'Warning' &&
              e.reason === EventReason.HcloudAPIError &&
              /unauthorized/.test(e.note ?? ''),
          ),
        );
      });
      assert.ok((await getNode(name('apifail'))).spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT));
    } finally {
      fake.faults.clear();
    }
    await eventually(async () => {
      assert.equal((await getNode(name('apifail'))).spec?.providerID, `hcloud://${server.id}`);
    });
  });

  it('a NotReady Node whose server is deleted is deleted; a Ready one never is', async () => {
    const a = fake.servers.add().id;
    const b = fake.servers.add().id;
    await createNode(name('gone'), { providerID: `hcloud://${a}`, ready: 'False' });
    await createNode(name('ready'), { providerID: `hcloud://${b}`, ready: 'True' });
    await sleep(4 * MONITOR_MS);
    assert.ok(await exists(name('gone')), 'not deleted while its server exists');
    fake.servers.delete(a);
    fake.servers.delete(b);
    await eventually(
      async () => {
        assert.equal(await exists(name('gone')), false);
      },
      { timeoutMs: 10_000 },
    );
    await sleep(10 * MONITOR_MS);
    assert.ok(await exists(name('ready')), 'a Ready Node is never deleted');
  });

  it('server off -> shutdown taint; back on and Ready -> untainted', async () => {
    const id = fake.servers.add({ status: 'off' }).id;
    await createNode(name('off'), { providerID: `hcloud://${id}`, ready: 'False' });
    await eventually(async () => {
      assert.ok(
        (await getNode(name('off'))).spec?.taints?.some(
          (t) => t.key === SHUTDOWN_TAINT && t.effect === 'NoSchedule',
        ),
      );
    });
    fake.servers.update(id, { status: 'running' });
    await setReady(name('off'), 'True');
    await eventually(async () => {
      assert.equal(
        (await getNode(name('off'))).spec?.taints?.some((t) => t.key === SHUTDOWN_TAINT),
        false,
      );
    });
  });

  it('many NotReady Nodes share one sweep per sweep period, never a lookup each; a deleted server’s Node still goes', async () => {
    const servers = Array.from({ length: 60 }, () => fake.servers.add()); // with the others': 2 pages
    for (const [i, server] of servers.entries())
      await createNode(name(`many${i}`), { providerID: `hcloud://${server.id}`, ready: 'False' });
    // While they register, a few may be answered singly, until a sweep serves them all.
    await sleep(2 * SWEEP_MS);
    const since = Date.now();
    await sleep(3 * SWEEP_MS);
    const victim = servers[30];
    assert.ok(victim);
    const deletedAt = Date.now();
    fake.servers.delete(victim.id);
    await eventually(async () => {
      assert.equal(await exists(name('many30')), false);
    });
    const sweeps = fake.requests
      .filter({ endpoint: '/v1/servers', since })
      .filter((r) => r.query.get('page') === '1' && !r.query.has('name'))
      .map((r) => r.at);
    assert.ok(sweeps.length >= 3, `${sweeps.length} sweeps`);
    for (const [i, at] of sweeps.entries())
      if (i > 0) assert.ok(at - (sweeps[i - 1] ?? 0) >= SWEEP_MS - 50, `sweeps at ${sweeps.join(', ')}`);
    // The only single lookups: the confirmation of the sweep's miss of the victim; and, when a sweep had
    // read page 1 as the victim went and read page 2 after, the server that slid from page 2 into page 1
    // under it (offset pagination, as the real API's), which that sweep missed too: found, and kept.
    const pages = fake.requests
      .filter({ endpoint: '/v1/servers', since })
      .filter((r) => !r.query.has('name'));
    const straddled = pages.some(
      (r, i) =>
        r.query.get('page') === '1' &&
        r.at <= deletedAt &&
        pages[i + 1]?.query.get('page') === '2' &&
        (pages[i + 1]?.at ?? 0) >= deletedAt,
    );
    const lookups = fake.requests
      .filter({ endpoint: '/v1/servers/{id}', since })
      .map((r) => `${r.path} ${r.status}`);
    const victimLookup = `/v1/servers/${victim.id} 404`;
    assert.deepEqual(
      lookups.filter((lookup) => lookup === victimLookup),
      [victimLookup],
    );
    const others = lookups.filter((lookup) => lookup !== victimLookup);
    assert.ok(
      others.length <= (straddled ? 1 : 0) && others.every((lookup) => lookup.endsWith(' 200')),
      `lookups: ${lookups.join(', ')}; a sweep straddled the deletion: ${straddled}`,
    );
    for (const [i, server] of servers.entries())
      if (server !== victim) assert.ok(await exists(name(`many${i}`)), `many${i} kept`);
  });

  for (const [i, storm] of (['503', '401', '429'] as const).entries()) {
    it(`API ${storm} storm: zero deletions while it lasts; the gone server's Node goes after`, async () => {
      if (storm === '503') fake.faults.next({ status: 503, times: 1_000_000 });
      else if (storm === '401') fake.faults.unauthorized(true);
      else fake.faults.next({ status: 429, times: 1_000_000 });
      const since = Date.now();
      await createNode(name(`storm${storm}`), {
        providerID: `hcloud://${987_654_321 + i}`,
        ready: 'Unknown',
      });
      await sleep(15 * MONITOR_MS);
      assert.ok(await exists(name(`storm${storm}`)), `deleted during a ${storm} storm`);
      assert.ok(fake.requests.count({ since }) > 0, 'the controller kept asking');
      fake.faults.clear();
      await eventually(
        async () => {
          assert.equal(await exists(name(`storm${storm}`)), false);
        },
        { timeoutMs: 10_000 },
      );
    });
  }

  it('foreign, Robot and malformed providerIDs are never touched', async () => {
    const shutdown: Taint = { key: SHUTDOWN_TAINT, effect: 'NoSchedule' };
    const foreign = [
      'aws:///eu-central-1a/i-0abc',
      'hrobot://1234',
      'hcloud://bm-1234',
      'hcloud://not-a-number',
    ];
    const before = new Map<string, string>();
    for (const [i, providerID] of foreign.entries()) {
      await createNode(name(`foreign${i}`), {
        providerID,
        ready: i % 2 === 0 ? 'False' : 'True',
        taints: i === 3 ? [uninitialized, shutdown] : [shutdown],
      });
      before.set(name(`foreign${i}`), (await getNode(name(`foreign${i}`))).metadata?.resourceVersion ?? '');
    }
    await sleep(15 * MONITOR_MS);
    for (const [nodeName, resourceVersion] of before) {
      const node = await getNode(nodeName);
      assert.equal(node.metadata?.resourceVersion, resourceVersion, `${nodeName} was modified`);
    }
  });

  it('Nodes outside the node selector are invisible to the controllers', async () => {
    await createNode(name('outside'), { providerID: 'hcloud://987654399', ready: 'False', inRun: false });
    await sleep(15 * MONITOR_MS);
    assert.ok(await exists(name('outside')));
  });
});
