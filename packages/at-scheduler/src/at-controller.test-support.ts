/**
 * What the in-process controller's integration files share (`at-*.int.test.ts` beside this file): the
 * controller for one namespace, and `atTestbed()`, which gives a file's describe a namespace of its own
 * with a controller reconciling it and the requests its tests make (the kubelet's part included: no
 * kubelet runs, `kubelet()` writes pod status through pods/status). Each file has its own namespace and
 * controller, so the files run side by side against the package's one control plane.
 */
import { createMetrics } from '@loopwright/metrics';
import type { Lister } from '@loopwright/informer';
import type { Registry } from 'prom-client';
import {
  KubeClient,
  Manager,
  createSilentLogger,
  type Resource,
  type StatusWriter,
} from '@loopwright/runtime';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import type { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { kubeAtApi } from './api.ts';
import { createAtControllers, podCacheScope } from './controller.ts';
import type { At } from './generated/types.ts';
import { createAtMetrics } from './metrics.ts';
import type { StartObservation } from './reconcile.ts';
import { AT_API_VERSION, AT_KIND, AT_RESOURCE, AT_UID_LABEL, POD_RESOURCE, type Pod } from './resource.ts';
import { installAtCrd } from './crd.test-support.ts';

export interface Running {
  starts: StartObservation[];
  /** The controller's pod cache (the label-selected informer it reads). */
  podCache: Pick<Lister<Pod>, 'get' | 'list'>;
  /**
   * Successful status patches per At name. Attempts that the API server refuses with 409 (a reconcile
   * that decided from a cache which had not yet seen the controller's own last write; its patch is
   * conditional on that older resourceVersion) change nothing and are not counted: how many there are
   * depends on how fast the watch delivers, not on what the controller decided.
   */
  statusWrites: Map<string, number>;
  /** The manager's registry, with at-scheduler's own families wired as main.ts wires them. */
  registry: Registry;
  stop(): Promise<void>;
}

/** One in-process controller for `namespace` (no leader election, no health server). */
export function startController(kc: KubeConfig, namespace: string): Running {
  const manager = new Manager({
    kubeConfig: kc,
    logger: createSilentLogger(),
    metrics: createMetrics({ defaultMetrics: false }),
    health: false,
    gracefulShutdownTimeoutMs: 5000,
    rateLimit: false,
  });
  const recorder = manager.eventRecorder('loopwright.dev/at-scheduler');
  const starts: StartObservation[] = [];
  const statusWrites = new Map<string, number>();
  const countingWrites = (status: StatusWriter<At>, at: { name: string }): StatusWriter<At> => ({
    patch: async (patch, options) => {
      const written = await status.patch(patch, options);
      statusWrites.set(at.name, (statusWrites.get(at.name) ?? 0) + 1);
      return written;
    },
  });
  for (const controller of createAtControllers({
    manager,
    api: kubeAtApi(manager.client),
    wrapStatusWriter: countingWrites,
    recorder,
    namespaces: [namespace],
    workers: 4,
    defaultImage: 'busybox:1.37.0',
    onStart: (o) => starts.push(o),
    metrics: createAtMetrics(manager.metrics.registry),
  })) {
    manager.add(controller);
  }
  // The same scope as the controller's pod informer, so the same shared informer.
  const podCache = manager.factory.forResource<Pod>(podCacheScope(namespace)).lister;
  const abort = new AbortController();
  const done = manager.start(abort.signal);
  return {
    starts,
    podCache,
    statusWrites,
    registry: manager.metrics.registry,
    stop: async () => {
      abort.abort();
      assert.equal(await done, 'stopped');
    },
  };
}

const EVENT_RESOURCE = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};
const NAMESPACE_RESOURCE = {
  group: '',
  version: 'v1',
  plural: 'namespaces',
  kind: 'Namespace',
  namespaced: false,
};

/** An `events.k8s.io/v1` Event, as far as the tests read it. */
interface EventObject {
  metadata?: { name?: string };
  reason: string;
  type: string;
  note?: string;
  regarding: { name: string };
}

/** The status of the condition `type` of `at`. */
export const condition = (at: At, type: string): string | undefined =>
  at.status?.conditions?.find((c) => c.type === type)?.status;

/**
 * A namespace with a controller reconciling it, and the requests the tests make (arrow functions, to be
 * destructured); the fields are set by the `before` hook of `atTestbed`.
 */
class AtTestbed {
  kc!: KubeConfig;
  client!: KubeClient;
  ns!: TestNamespace;
  controller!: Running;
  ats!: Resource<At>;
  pods!: Resource<Pod>;

  readonly createAt = (name: string, spec: Record<string, unknown>): Promise<At> =>
    this.ats.create({
      apiVersion: AT_API_VERSION,
      kind: AT_KIND,
      metadata: { name, namespace: this.ns.name },
      // Tests send specs the CRD's schema may refuse: the API server judges them, not the type.
      spec: spec as unknown as At['spec'],
    });

  readonly getAt = (name: string, namespace = this.ns.name): Promise<At> => this.ats.get({ namespace, name });

  readonly podsOf = async (at: At, namespace = this.ns.name): Promise<Pod[]> =>
    (await this.pods.list({ namespace, labelSelector: `${AT_UID_LABEL}=${at.metadata?.uid ?? ''}` })).items;

  readonly getPod = (name: string, namespace = this.ns.name): Promise<Pod> =>
    this.pods.get({ namespace, name });

  readonly eventsFor = async (
    name: string,
    namespace = this.ns.name,
  ): Promise<{ reason: string; type: string; note?: string }[]> =>
    (await this.client.resource<EventObject>(EVENT_RESOURCE).list({ namespace })).items.filter(
      (e) => e.regarding.name === name,
    );

  /** Plays the kubelet: writes the pod's phase (and the command container's termination) through pods/status. */
  readonly kubelet = (
    podName: string,
    phase: 'Running' | 'Succeeded' | 'Failed',
    terminated?: { exitCode: number; reason: string; message?: string },
    namespace = this.ns.name,
  ): Promise<unknown> => {
    const state = terminated
      ? {
          terminated: {
            ...terminated,
            startedAt: new Date().toISOString(),
            finishedAt: new Date().toISOString(),
          },
        }
      : { running: { startedAt: new Date().toISOString() } };
    return this.pods.status.patch(
      { namespace, name: podName },
      {
        merge: {
          status: {
            phase,
            containerStatuses: [
              {
                name: 'command',
                image: 'busybox:1.37.0',
                imageID: '',
                ready: phase === 'Running',
                restartCount: 0,
                state,
              },
            ],
          },
        },
      },
    );
  };
}

/**
 * Registers the hooks of the enclosing describe: the At CRD, a namespace named after `prefix` that
 * enforces the restricted Pod Security profile (every At pod must pass it), and a controller for it,
 * stopped with the namespace after the describe.
 */
export function atTestbed(prefix: string): AtTestbed {
  const testbed = new AtTestbed();
  before(async () => {
    testbed.kc = loadTestKubeConfig();
    testbed.client = new KubeClient(testbed.kc, { rateLimit: false });
    testbed.ats = testbed.client.resource<At>(AT_RESOURCE);
    testbed.pods = testbed.client.resource<Pod>(POD_RESOURCE);
    await installAtCrd(testbed.kc);
    testbed.ns = await createTestNamespace(testbed.kc, prefix);
    // Pod Security admission enforces the restricted profile here: every At pod below must pass it.
    await testbed.client
      .resource(NAMESPACE_RESOURCE)
      .patch(
        { name: testbed.ns.name },
        { merge: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } },
      );
    testbed.controller = startController(testbed.kc, testbed.ns.name);
  });
  after(async () => {
    await testbed.controller.stop();
    await testbed.ns.cleanup();
    await testbed.client.close();
  });
  return testbed;
}
