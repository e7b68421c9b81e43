/**
 * What the controllers' integration files share (initialisation, lifecycle, API storms): both
 * controllers in process on a real kube-apiserver (no kubelet, and no node lifecycle controller in the
 * control plane's controller manager: nothing else touches Nodes) against a fake Hetzner API of the
 * file's own. Nodes are plain objects created here; their Ready condition is written through
 * nodes/status. Nodes are cluster-scoped, so each file's Nodes carry a run label of its own and its
 * controllers' node selector is set to it: Nodes of other test files are invisible to them (which also
 * exercises the selector), and their names carry the run too.
 */
import { realClock } from '@loopwright/core';
import { HcloudClient } from '@loopwright/hcloud';
import { createMetrics } from '@loopwright/metrics';
import {
  KubeClient,
  Manager,
  createSilentLogger,
  type EventsV1Event,
  type Resource,
  type ResourceType,
} from '@loopwright/runtime';
import { loadTestKubeConfig } from '@loopwright/envtest';
import { startFakeHcloud, type FakeHcloud } from '@loopwright/fakes/hcloud';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before } from 'node:test';
import type { Registry } from 'prom-client';
import { createNodeApi } from './api.ts';
import { RequestBudget } from './budget.ts';
import { createCloudNodeControllers, nodeCacheScope } from './controller.ts';
import { registerNodeMetrics } from './metrics.ts';
import { UNINITIALIZED_TAINT } from './names.ts';
import { NODES, type Node, type Taint } from './node.ts';
import { reportReady } from './node-status.test-support.ts';
import { ServerDirectory } from './server-directory.ts';

const RUN_LABEL = 'loopwright.dev/cloud-node-test';
export const MONITOR_MS = 200;
// A few servers, so one page: NotReady Nodes are checked once per sweep period (see notReadyDataMaxAgeMs).
export const SWEEP_MS = 1000;
export const REFRESH_MS = 2000;

/** The events.k8s.io Events: where the controllers' Events about Nodes (and the process's about its Pod) are. */
export const EVENTS: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};

export const uninitialized: Taint = { key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' };

export interface NodeOptions {
  providerID?: string;
  taints?: Taint[];
  ready?: 'True' | 'False' | 'Unknown';
  annotations?: Record<string, string>;
  inRun?: boolean;
}

/**
 * The controllers of one test file, its fake Hetzner API and the requests its tests make; `fake`,
 * `kube`, `nodes` and `networkId` are set by the `before` hook of `controllersTestbed`.
 */
class ControllersTestbed {
  readonly run = randomBytes(3).toString('hex');
  fake!: FakeHcloud;
  kube!: KubeClient;
  nodes!: Resource<Node>;
  networkId!: number;
  /** The Manager's registry, with cloud-node's own gauges registered as main.ts registers them. */
  registry!: Registry;
  readonly created: string[] = [];

  /** A Node name of this file's run. */
  readonly name = (suffix: string): string => `cn-${this.run}-${suffix}`;

  readonly createNode = async (name: string, options: NodeOptions): Promise<Node> => {
    this.created.push(name);
    const labels: Record<string, string> = options.inRun === false ? {} : { [RUN_LABEL]: this.run };
    await this.nodes.create({
      metadata: { name, labels, annotations: options.annotations ?? {} },
      spec: {
        ...(options.providerID ? { providerID: options.providerID } : {}),
        taints: options.taints ?? [],
      },
    });
    if (options.ready) await this.setReady(name, options.ready);
    return this.getNode(name);
  };

  readonly setReady = (name: string, status: 'True' | 'False' | 'Unknown'): Promise<unknown> =>
    reportReady(this.kube, name, status, { reason: 'Test' });

  readonly getNode = (name: string): Promise<Node> => this.nodes.get({ name });

  readonly exists = async (name: string): Promise<boolean> =>
    (await this.nodes.getOptional({ name })) !== undefined;

  /** The Events about the Node `name` (a cluster-scoped object's Events are in `default`). */
  readonly events = async (name: string): Promise<EventsV1Event[]> =>
    (await this.kube.resource<EventsV1Event>(EVENTS).list({ namespace: 'default' })).items.filter(
      (e) => e.regarding.name === name,
    );
}

/**
 * Registers the hooks of the enclosing describe: a fake Hetzner API with a network, and both
 * controllers in one Manager, selecting this file's Nodes, with short periods; after the describe, the
 * Manager stops and every Node created is deleted.
 */
export function controllersTestbed(): ControllersTestbed {
  const testbed = new ControllersTestbed();
  let stop: (() => Promise<void>) | undefined;

  before(async () => {
    const fake = await startFakeHcloud();
    testbed.fake = fake;
    testbed.networkId = fake.networks.add({ name: 'k8s', ip_range: '10.0.0.0/16' }).id;
    const kc = loadTestKubeConfig();
    testbed.kube = new KubeClient(kc, { rateLimit: false });
    testbed.nodes = testbed.kube.resource<Node>(NODES);
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
    const nodeSelector = `${RUN_LABEL}=${testbed.run}`;
    for (const controller of createCloudNodeControllers({
      api: createNodeApi({
        client: manager.client,
        recorder: manager.eventRecorder('loopwright.dev/cloud-node'),
        directory,
      }),
      addressFamily: 'dualstack',
      networkId: testbed.networkId,
      zoneLabels: true,
      nodeMonitorPeriodMs: MONITOR_MS,
      notReadySweepPeriodMs: SWEEP_MS,
      nodeStatusUpdateFrequencyMs: REFRESH_MS,
      nodeSelector,
      initRetryMs: 200,
    }))
      manager.add(controller);
    registerNodeMetrics(manager.metrics.registry, {
      nodes: manager.factory.forResource<Node>(nodeCacheScope(nodeSelector)).lister,
      clock: realClock,
    });
    testbed.registry = manager.metrics.registry;
    const abort = new AbortController();
    const done = manager.start(abort.signal);
    stop = async () => {
      abort.abort();
      assert.equal(await done, 'stopped');
    };
  });

  after(async () => {
    await stop?.();
    for (const name of testbed.created) await testbed.nodes.delete({ name });
    await testbed.kube.close();
    await testbed.fake.close();
  });

  return testbed;
}
