/**
 * Which Node updates reach each controller's queue, on a real kube-apiserver: a witness handler on the
 * same shared informer sees every update, and the controllers' `workqueue_adds_total` shows which of
 * them were enqueued. The periods are an hour, so no requeue adds to the count during a test.
 */
import { HcloudClient } from '@loopwright/hcloud';
import { createMetrics } from '@loopwright/metrics';
import { KubeClient, Manager, createSilentLogger, type Resource } from '@loopwright/runtime';
import { reportReady } from './node-status.test-support.ts';
import { eventually, loadTestKubeConfig } from '@loopwright/envtest';
import { startFakeHcloud, type FakeHcloud } from '@loopwright/fakes/hcloud';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createNodeApi } from './api.ts';
import { RequestBudget } from './budget.ts';
import { createCloudNodeControllers, LIFECYCLE_CONTROLLER, NODE_CONTROLLER } from './controller.ts';
import { NODES, type Node } from './node.ts';
import { ServerDirectory } from './server-directory.ts';

const RUN = randomBytes(3).toString('hex');
const RUN_LABEL = 'loopwright.dev/cloud-node-watch-test';
const HOUR_MS = 3_600_000;

describe('what the controllers watch', () => {
  let fake: FakeHcloud;
  let kube: KubeClient;
  let nodes: Resource<Node>;
  let metrics: ReturnType<typeof createMetrics>;
  let stop: () => Promise<void>;
  const seen: Node[] = [];
  const created: string[] = [];

  before(async () => {
    fake = await startFakeHcloud();
    const kc = loadTestKubeConfig();
    kube = new KubeClient(kc, { rateLimit: false });
    nodes = kube.resource<Node>(NODES);
    metrics = createMetrics({ defaultMetrics: false });
    const manager = new Manager({
      kubeConfig: kc,
      logger: createSilentLogger(),
      metrics,
      health: false,
      gracefulShutdownTimeoutMs: 5000,
      rateLimit: false,
    });
    const hcloud = new HcloudClient({ token: fake.token, endpoint: fake.url, maxRetries: 0 });
    const nodeSelector = `${RUN_LABEL}=${RUN}`;
    for (const controller of createCloudNodeControllers({
      api: createNodeApi({
        client: manager.client,
        recorder: manager.eventRecorder('loopwright.dev/cloud-node'),
        directory: new ServerDirectory({
          client: hcloud,
          budget: new RequestBudget({ rateLimit: () => hcloud.rateLimit }),
        }),
      }),
      addressFamily: 'ipv4',
      networkId: undefined,
      zoneLabels: true,
      nodeMonitorPeriodMs: HOUR_MS,
      nodeStatusUpdateFrequencyMs: HOUR_MS,
      nodeSelector,
    }))
      manager.add(controller);
    // The controllers' informer (same scope): its handlers see each event in one dispatch, so once this
    // one has an update, the controllers' handlers have judged it too.
    manager.factory
      .forResource<Node>({ group: '', version: 'v1', plural: 'nodes', labelSelector: nodeSelector })
      .addEventHandler({ onAdd: (n) => seen.push(n), onUpdate: (_old, n) => seen.push(n) });
    const abort = new AbortController();
    const done = manager.start(abort.signal);
    stop = async () => {
      abort.abort();
      assert.equal(await done, 'stopped');
    };
  });

  after(async () => {
    await stop();
    for (const name of created) await nodes.delete({ name });
    await kube.close();
    await fake.close();
  });

  /** The sum of the series that carry `labels` (workqueue_depth has one per priority). */
  const sample = async (metric: string, labels: Record<string, string>): Promise<number> => {
    const values = (await metrics.registry.getSingleMetric(metric)?.get())?.values ?? [];
    return values
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((sum, v) => sum + v.value, 0);
  };
  const adds = (controller: string): Promise<number> => sample('workqueue_adds_total', { name: controller });
  /**
   * Resolves once the controller has nothing queued and nothing in progress. A key already queued
   * absorbs the next add without counting it (the queue deduplicates), so each add measured below starts
   * from here: an update the predicate lets through then counts, whatever the machine's load.
   */
  const settled = (controller: string): Promise<void> =>
    eventually(async () => {
      assert.equal(await sample('workqueue_depth', { name: controller }), 0);
      assert.equal(await sample('controller_runtime_active_workers', { controller }), 0);
    });
  /** Resolves once the informer delivered a version of `name` that satisfies `check`. */
  const witnessed = (name: string, check: (node: Node) => boolean): Promise<void> =>
    eventually(() => {
      assert.ok(seen.some((n) => n.metadata?.name === name && check(n)));
    });
  const createNode = async (name: string, providerID: string): Promise<void> => {
    created.push(name);
    await nodes.create({ metadata: { name, labels: { [RUN_LABEL]: RUN } }, spec: { providerID } });
  };
  /** kubelet's status report: the Ready condition with a heartbeat time. */
  const report = (name: string, ready: 'True' | 'False' | 'Unknown', heartbeat: string): Promise<unknown> =>
    reportReady(kube, name, ready, {
      reason: `Kubelet${ready}`,
      heartbeat,
      transition: '2026-01-01T00:00:00Z',
    });
  const heartbeatIs =
    (at: string) =>
    (n: Node): boolean =>
      (n.status?.conditions?.[0] as { lastHeartbeatTime?: string } | undefined)?.lastHeartbeatTime === at;

  it('the Node controller is not triggered by status-only updates, its own address writes included', async () => {
    const name = `cnw-${RUN}-addresses`;
    const server = fake.servers.add({ name });
    const before = await adds(NODE_CONTROLLER);
    await createNode(name, `hcloud://${server.id}`);
    // The refresh on creation writes the addresses through nodes/status.
    await witnessed(name, (n) => (n.status?.addresses?.length ?? 0) > 0);
    assert.equal(await adds(NODE_CONTROLLER), before + 1, 'only the creation was enqueued');

    await settled(NODE_CONTROLLER);
    await report(name, 'True', '2026-01-01T00:01:00Z');
    await witnessed(name, heartbeatIs('2026-01-01T00:01:00Z'));
    assert.equal(await adds(NODE_CONTROLLER), before + 1, 'a status report is not enqueued');

    // A change of the Node itself still is (here the annotation that decides its addresses).
    await settled(NODE_CONTROLLER);
    await nodes.patch(
      { name },
      {
        merge: {
          metadata: { annotations: { 'alpha.kubernetes.io/provided-node-ip': server.public_net.ipv4?.ip } },
        },
      },
    );
    await witnessed(
      name,
      (n) => n.metadata?.annotations?.['alpha.kubernetes.io/provided-node-ip'] !== undefined,
    );
    assert.equal(await adds(NODE_CONTROLLER), before + 2);
  });

  it('the lifecycle controller is triggered when Ready changes, not by a heartbeat', async () => {
    const name = `cnw-${RUN}-ready`;
    const server = fake.servers.add({ name });
    await createNode(name, `hcloud://${server.id}`);
    await report(name, 'True', '2026-01-01T00:01:00Z');
    await witnessed(name, heartbeatIs('2026-01-01T00:01:00Z'));
    await settled(LIFECYCLE_CONTROLLER);
    const ready = await adds(LIFECYCLE_CONTROLLER);

    await report(name, 'True', '2026-01-01T00:02:00Z');
    await witnessed(name, heartbeatIs('2026-01-01T00:02:00Z'));
    assert.equal(await adds(LIFECYCLE_CONTROLLER), ready, 'a heartbeat of a Ready Node is not enqueued');

    await settled(LIFECYCLE_CONTROLLER);
    await report(name, 'False', '2026-01-01T00:03:00Z');
    await witnessed(name, heartbeatIs('2026-01-01T00:03:00Z'));
    assert.equal(await adds(LIFECYCLE_CONTROLLER), ready + 1, 'turning NotReady is enqueued');

    // NotReady Nodes are polled (every period); Ready=False -> Unknown changes nothing about that.
    await settled(LIFECYCLE_CONTROLLER);
    await report(name, 'Unknown', '2026-01-01T00:04:00Z');
    await witnessed(name, heartbeatIs('2026-01-01T00:04:00Z'));
    assert.equal(await adds(LIFECYCLE_CONTROLLER), ready + 1);
  });
});
