/**
 * What the in-process controller's integration files share (`at-*.int.test.ts` beside this file): the
 * controller for one namespace, and `atTestbed()`, which gives a file's describe a namespace of its own
 * with a controller reconciling it and the requests its tests make (the kubelet's part included: no
 * kubelet runs, `kubelet()` writes pod status through pods/status). Each file has its own namespace and
 * controller, so the files run side by side against the package's one control plane.
 */
import { createMetrics } from '@loopwright/metrics';
import type { Lister } from '@loopwright/informer';
import { KubeClient, Manager, createSilentLogger } from '@loopwright/runtime';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import type { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { kubeAtApi, type AtApi } from './api.ts';
import { createAtControllers, podCacheScope } from './controller.ts';
import type { At } from './generated/types.ts';
import type { StartObservation } from './reconcile.ts';
import { AT_UID_LABEL, type Pod } from './resource.ts';
import { installAtCrd } from './testing/crd.ts';

export const ATS = (ns: string): string =>
  `/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/${ns}/ats`;
export const PODS = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
export const MERGE = 'application/merge-patch+json';

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
  const api = kubeAtApi(manager.client);
  const countingApi: AtApi = {
    ...api,
    patchAtStatus: async (ns, name, status, rv, signal) => {
      const written = await api.patchAtStatus(ns, name, status, rv, signal);
      statusWrites.set(name, (statusWrites.get(name) ?? 0) + 1);
      return written;
    },
  };
  for (const controller of createAtControllers({
    manager,
    api: countingApi,
    recorder,
    namespaces: [namespace],
    workers: 4,
    defaultImage: 'busybox:1.37.0',
    onStart: (o) => starts.push(o),
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
    stop: async () => {
      abort.abort();
      assert.equal(await done, 'stopped');
    },
  };
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

  readonly createAt = (name: string, spec: Record<string, unknown>): Promise<At> =>
    this.client.requestJson<At>('POST', ATS(this.ns.name), {
      body: { apiVersion: 'cnat.programming-kubernetes.info/v1alpha1', kind: 'At', metadata: { name }, spec },
    });

  readonly getAt = (name: string, namespace = this.ns.name): Promise<At> =>
    this.client.requestJson<At>('GET', `${ATS(namespace)}/${name}`);

  readonly podsOf = async (at: At, namespace = this.ns.name): Promise<Pod[]> =>
    (
      await this.client.requestJson<{ items: Pod[] }>(
        'GET',
        `${PODS(namespace)}?labelSelector=${encodeURIComponent(`${AT_UID_LABEL}=${at.metadata?.uid ?? ''}`)}`,
      )
    ).items;

  readonly getPod = (name: string, namespace = this.ns.name): Promise<Pod> =>
    this.client.requestJson<Pod>('GET', `${PODS(namespace)}/${name}`);

  readonly eventsFor = async (
    name: string,
    namespace = this.ns.name,
  ): Promise<{ reason: string; type: string; note?: string }[]> =>
    (
      await this.client.requestJson<{
        items: { reason: string; type: string; note?: string; regarding: { name: string } }[];
      }>('GET', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`)
    ).items.filter((e) => e.regarding.name === name);

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
    return this.client.requestJson('PATCH', `${PODS(namespace)}/${podName}/status`, {
      contentType: MERGE,
      body: {
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
    });
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
    await installAtCrd(testbed.kc);
    testbed.ns = await createTestNamespace(testbed.kc, prefix);
    // Pod Security admission enforces the restricted profile here: every At pod below must pass it.
    await testbed.client.requestJson('PATCH', `/api/v1/namespaces/${testbed.ns.name}`, {
      contentType: MERGE,
      body: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
    });
    testbed.controller = startController(testbed.kc, testbed.ns.name);
  });
  after(async () => {
    await testbed.controller.stop();
    await testbed.ns.cleanup();
    await testbed.client.close();
  });
  return testbed;
}
