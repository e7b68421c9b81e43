/**
 * The At controller on a real kube-apiserver + etcd + kube-controller-manager (garbage collection runs;
 * no kubelet: `kubelet()` below plays its part by writing pod status through pods/status).
 */
import { createMetrics } from '@loopwright/metrics';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/testing';
import { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { kubeAtApi, type AtApi } from './api.ts';
import { createAtControllers, podCacheScope } from './controller.ts';
import { loadAtCrd, type AtCrd } from './crd.ts';
import { installAtCrd } from './testing/crd.ts';
import type { At } from './generated/types.ts';
import type { StartObservation } from './reconcile.ts';
import { UNCACHED_POD_RECHECK_MS } from './decide.ts';
import { AT_UID_LABEL, MANAGED_BY_LABEL, POD_SELECTOR, type Pod } from './resource.ts';
import { parseSchedule } from './schedule.ts';
import type { Lister } from '@loopwright/informer';
import { KubeApiError, KubeClient, Manager, createSilentLogger } from '@loopwright/runtime';

const ATS = (ns: string): string => `/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/${ns}/ats`;
const PODS = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
const MERGE = 'application/merge-patch+json';
interface Running {
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
function startController(kc: KubeConfig, namespace: string): Running {
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

describe('at-scheduler on a real control plane', () => {
  let kc: KubeConfig;
  let client: KubeClient;
  let ns: TestNamespace;
  let controller: Running;

  const createAt = (name: string, spec: Record<string, unknown>): Promise<At> =>
    client.requestJson<At>('POST', ATS(ns.name), {
      body: { apiVersion: 'cnat.programming-kubernetes.info/v1alpha1', kind: 'At', metadata: { name }, spec },
    });
  const getAt = (name: string, namespace = ns.name): Promise<At> =>
    client.requestJson<At>('GET', `${ATS(namespace)}/${name}`);
  const podsOf = async (at: At, namespace = ns.name): Promise<Pod[]> =>
    (
      await client.requestJson<{ items: Pod[] }>(
        'GET',
        `${PODS(namespace)}?labelSelector=${encodeURIComponent(`${AT_UID_LABEL}=${at.metadata?.uid ?? ''}`)}`,
      )
    ).items;
  const getPod = (name: string, namespace = ns.name): Promise<Pod> =>
    client.requestJson<Pod>('GET', `${PODS(namespace)}/${name}`);
  const eventsFor = async (
    name: string,
    namespace = ns.name,
  ): Promise<{ reason: string; type: string; note?: string }[]> =>
    (
      await client.requestJson<{
        items: { reason: string; type: string; note?: string; regarding: { name: string } }[];
      }>('GET', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`)
    ).items.filter((e) => e.regarding.name === name);
  const condition = (at: At, type: string): string | undefined =>
    at.status?.conditions?.find((c) => c.type === type)?.status;

  /** Plays the kubelet: writes the pod's phase (and the command container's termination) through pods/status. */
  const kubelet = (
    podName: string,
    phase: 'Running' | 'Succeeded' | 'Failed',
    terminated?: { exitCode: number; reason: string; message?: string },
    namespace = ns.name,
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
    return client.requestJson('PATCH', `${PODS(namespace)}/${podName}/status`, {
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

  before(async () => {
    kc = loadTestKubeConfig();
    client = new KubeClient(kc, { rateLimit: false });
    await installAtCrd(kc);
    ns = await createTestNamespace(kc, 'at');
    // Pod Security admission enforces the restricted profile here: every At pod below must pass it.
    await client.requestJson('PATCH', `/api/v1/namespaces/${ns.name}`, {
      contentType: MERGE,
      body: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
    });
    controller = startController(kc, ns.name);
  });
  after(async () => {
    await controller.stop();
    await ns.cleanup();
    await client.close();
  });

  it("applies the book's sample unchanged; a past schedule runs at once in a locked-down pod; success is recorded", async () => {
    // The book's manifest as printed, sent the way `kubectl apply --server-side -f` sends it.
    const bookSample = [
      'apiVersion: cnat.programming-kubernetes.info/v1alpha1',
      'kind: At',
      'metadata: {name: example-at}',
      'spec: {schedule: "2019-04-12T10:12:00Z", command: "echo YAY"}',
      '',
    ].join('\n');
    const applied = await client.fetch(`${ATS(ns.name)}/example-at?fieldManager=kubectl`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/apply-patch+yaml', Accept: 'application/json' },
      body: bookSample,
    });
    const appliedBody = await applied.text();
    assert.equal(applied.status, 201, appliedBody);
    const at = JSON.parse(appliedBody) as At;
    await eventually(async () => {
      assert.equal((await getAt('example-at')).status?.phase, 'RUNNING');
    });
    const recorded = await getAt('example-at');
    assert.equal(recorded.status?.podName, 'example-at-pod');
    assert.equal(condition(recorded, 'Scheduled'), 'True');
    await eventually(async () => {
      assert.equal((await podsOf(at)).length, 1);
    });
    // Admitted under the namespace's enforced restricted profile, which does refuse a default pod:
    await assert.rejects(
      client.requestJson('POST', `${PODS(ns.name)}?dryRun=All`, {
        body: {
          metadata: { name: 'unrestricted' },
          spec: { containers: [{ name: 'c', image: 'busybox:1.37.0' }] },
        },
      }),
      (error: unknown) => error instanceof KubeApiError && error.reason === 'Forbidden',
    );
    const pod = await getPod('example-at-pod');
    const spec = pod.spec as {
      restartPolicy: string;
      automountServiceAccountToken: boolean;
      securityContext: { runAsNonRoot: boolean; runAsUser: number };
      containers: [{ command: string[]; image: string; securityContext: unknown }];
    };
    assert.deepEqual(spec.containers[0].command, ['/bin/sh', '-c', 'echo YAY']);
    assert.equal(spec.containers[0].image, 'busybox:1.37.0');
    assert.equal(spec.restartPolicy, 'Never');
    assert.equal(spec.automountServiceAccountToken, false);
    assert.equal(spec.securityContext.runAsNonRoot, true);
    assert.deepEqual(
      pod.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller, r.blockOwnerDeletion]),
      [['At', 'example-at', at.metadata?.uid, true, true]],
    );

    await kubelet('example-at-pod', 'Running');
    await kubelet('example-at-pod', 'Succeeded', { exitCode: 0, reason: 'Completed' });
    await eventually(async () => {
      assert.equal((await getAt('example-at')).status?.phase, 'DONE');
    });
    const done = await getAt('example-at');
    assert.equal(done.status?.outcome, 'Succeeded');
    assert.equal(done.status.exitCode, 0);
    assert.equal(done.status.reason, 'Completed');
    assert.ok(done.status.completionTime && done.status.startTime);
    assert.equal(condition(done, 'Succeeded'), 'True');
    assert.equal(condition(done, 'Running'), 'False');
    await eventually(async () => {
      assert.deepEqual((await eventsFor('example-at')).map((e) => e.reason).sort(), ['Started', 'Succeeded']);
    });

    // Spec changes after DONE do nothing.
    await client.requestJson('PATCH', `${ATS(ns.name)}/example-at`, {
      contentType: MERGE,
      body: { spec: { schedule: '2019-04-12T10:13:00Z' } },
    });
    await sleep(500);
    assert.equal((await getAt('example-at')).status?.phase, 'DONE');
    assert.equal((await podsOf(at)).length, 1);
  });

  it('rejects an invalid schedule and an empty command at admission; accepts offsets and fractions', async () => {
    for (const [name, spec] of [
      ['bad-schedule', { schedule: 'tomorrow at noon', command: 'true' }],
      ['bad-date', { schedule: '2019-02-30T10:00:00Z', command: 'true' }],
      ['no-command', { schedule: '2019-04-12T10:12:00Z', command: '' }],
      ['no-schedule', { command: 'true' }],
    ] as const) {
      await assert.rejects(
        createAt(name, spec),
        (error: unknown) => error instanceof KubeApiError && error.reason === 'Invalid',
        name,
      );
    }
    // The API server admits strict RFC 3339 only (observed on 1.36); whatever it admits, the controller
    // must parse. The parser's extra tolerance is for values stored before the schema validated them.
    const variants: [string, boolean][] = [
      ['2019-04-12T10:12:00.123456789Z', true],
      ['2019-04-12t10:12:00z', true],
      ['2019-04-12T10:12:00.5-07:30', true],
      ['2019-04-12T10:12:00', false],
      ['2019-04-12 10:12:00Z', false],
      ['2019-04-12T10:12Z', false],
      ['2019-04-12T10:12:00+0200', false],
      ['2019-04-12', false],
      ['20190412T101200Z', false],
    ];
    for (const [i, [schedule, expected]] of variants.entries()) {
      const admitted = await client
        .requestJson('POST', `${ATS(ns.name)}?dryRun=All`, {
          body: {
            apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
            kind: 'At',
            metadata: { name: `variant-${i}` },
            spec: { schedule, command: 'true' },
          },
        })
        .then(
          () => true,
          () => false,
        );
      assert.equal(admitted, expected, schedule);
      if (admitted)
        assert.ok(
          parseSchedule(schedule).ok,
          `the API server admits "${schedule}" but the controller cannot parse it`,
        );
    }
    await createAt('offset', { schedule: '2099-04-12T12:12:00.123+02:00', command: 'true' });
    await eventually(async () => {
      assert.equal((await getAt('offset')).status?.phase, 'PENDING');
    });
  });

  it('waits until a future schedule without polling, then creates the pod right after it, never before', async () => {
    const scheduleMs = Math.ceil((Date.now() + 2500) / 1000) * 1000 + 500;
    const schedule = new Date(scheduleMs).toISOString();
    const at = await createAt('future', { schedule, command: 'date' });
    // PENDING is the CRD's default: shown at once, written by nobody.
    assert.equal((await getAt('future')).status?.phase, 'PENDING');
    while (Date.now() < scheduleMs - 150) {
      assert.equal((await podsOf(at)).length, 0, 'no pod before the schedule');
      await sleep(100);
    }
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 1);
      },
      { timeoutMs: 5000 },
    );
    const start = controller.starts.find((s) => s.name === 'future');
    assert.ok(start);
    assert.ok(start.issuedMs >= scheduleMs, `created ${start.issuedMs - scheduleMs} ms early`);
    // Behaviour, not performance: a polling loop (the book's 10 s resync) would be seconds late.
    assert.ok(start.issuedMs - scheduleMs < 2000, `created ${start.issuedMs - scheduleMs} ms late`);
    // Its first status write is the start: nothing is written while it waits.
    assert.equal(controller.statusWrites.get('future'), 1);
    assert.equal((await getAt('future')).status?.phase, 'RUNNING');
    await eventually(async () => {
      assert.deepEqual(
        (await eventsFor('future')).map((e) => e.reason),
        ['Started'],
      );
    });
  });

  it('reschedules when the schedule changes while pending', async () => {
    const at = await createAt('moved', {
      schedule: new Date(Date.now() + 3_600_000).toISOString(),
      command: 'true',
    });
    await eventually(async () => {
      assert.equal((await getAt('moved')).status?.phase, 'PENDING');
    });
    const soon = Date.now() + 1000;
    await client.requestJson('PATCH', `${ATS(ns.name)}/moved`, {
      contentType: MERGE,
      body: { spec: { schedule: new Date(soon).toISOString() } },
    });
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 1);
      },
      { timeoutMs: 5000 },
    );
    const start = controller.starts.find((s) => s.name === 'moved');
    assert.equal(start?.scheduleMs, soon);
    assert.ok(start.issuedMs >= soon);
  });

  it('passes a command with quotes, pipes and && verbatim as the third element of the container command', async () => {
    const command = `printf '%s\\n' "a  b" | tr a A && echo "it's \\"quoted\\"" ; exit 0`;
    await createAt('quoting', { schedule: '2019-04-12T10:12:00Z', command });
    await eventually(async () => {
      const pod = await getPod('quoting-pod');
      assert.deepEqual((pod.spec as { containers: [{ command: string[] }] }).containers[0].command, [
        '/bin/sh',
        '-c',
        command,
      ]);
    });
  });

  it('records a failing command as DONE/Failed with its exit code, reason and message', async () => {
    await createAt('failing', { schedule: '2019-04-12T10:12:00Z', command: 'exit 3' });
    await eventually(() => getPod('failing-pod'));
    await kubelet('failing-pod', 'Failed', { exitCode: 3, reason: 'Error', message: 'boom' });
    await eventually(async () => {
      assert.equal((await getAt('failing')).status?.phase, 'DONE');
    });
    const done = await getAt('failing');
    assert.deepEqual(
      [done.status?.outcome, done.status?.exitCode, done.status?.reason, done.status?.message],
      ['Failed', 3, 'Error', 'boom'],
    );
    assert.equal(condition(done, 'Failed'), 'True');
    await eventually(async () => {
      assert.ok((await eventsFor('failing')).some((e) => e.reason === 'Failed' && e.type === 'Warning'));
    });
  });

  it('a pod deleted while running ends the At Failed/PodDisappeared, and no second pod is ever created', async () => {
    const at = await createAt('vanishing', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    await eventually(() => getPod('vanishing-pod'));
    await kubelet('vanishing-pod', 'Running');
    await client.requestJson('DELETE', `${PODS(ns.name)}/vanishing-pod`);
    await eventually(async () => {
      assert.equal((await getAt('vanishing')).status?.phase, 'DONE');
    });
    const done = await getAt('vanishing');
    assert.deepEqual([done.status?.outcome, done.status?.reason], ['Failed', 'PodDisappeared']);
    await eventually(async () => {
      assert.ok(
        (await eventsFor('vanishing')).some((e) => e.reason === 'PodDisappeared' && e.type === 'Warning'),
      );
    });
    await sleep(500);
    assert.equal((await podsOf(at)).length, 0);
    assert.equal(controller.starts.filter((s) => s.name === 'vanishing').length, 1);
  });

  it('a running pod whose managed-by label is removed is still its pod: its outcome is recorded when it ends', async () => {
    await createAt('unlabelled', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    await eventually(() => getPod('unlabelled-pod'));
    await kubelet('unlabelled-pod', 'Running');
    await client.requestJson('PATCH', `${PODS(ns.name)}/unlabelled-pod`, {
      contentType: MERGE,
      body: { metadata: { labels: { [MANAGED_BY_LABEL]: null } } },
    });
    await eventually(() => {
      assert.equal(controller.podCache.get(ns.name, 'unlabelled-pod'), undefined);
    });
    // The pod left the cache but exists: not PodDisappeared.
    await sleep(1000);
    assert.equal((await getAt('unlabelled')).status?.phase, 'RUNNING');

    // No pod event reaches the controller now: only its periodic live read can notice the end.
    await kubelet('unlabelled-pod', 'Succeeded', { exitCode: 0, reason: 'Completed' });
    await eventually(
      async () => {
        const done = await getAt('unlabelled');
        assert.deepEqual([done.status?.phase, done.status?.outcome], ['DONE', 'Succeeded']);
      },
      { timeoutMs: UNCACHED_POD_RECHECK_MS + 5_000, intervalMs: 250 },
    );
  });

  it('an edited RUNNING or DONE At records each new generation as observed (status and conditions) with one write, and does not run again', async () => {
    const writes = (): number => controller.statusWrites.get('edited') ?? 0;
    const edit = async (command: string, expectedGeneration: number, writesBefore: number): Promise<void> => {
      const edited = await client.requestJson<At>('PATCH', `${ATS(ns.name)}/edited`, {
        contentType: MERGE,
        body: { spec: { command } },
      });
      assert.equal(edited.metadata?.generation, expectedGeneration);
      await eventually(async () => {
        const at = await getAt('edited');
        assert.equal(at.status?.observedGeneration, expectedGeneration);
        assert.ok(at.status.conditions?.length);
        for (const c of at.status.conditions) assert.equal(c.observedGeneration, expectedGeneration, c.type);
      });
      await eventually(() => {
        assert.equal(writes(), writesBefore + 1);
      });
      // The write's own watch event reconciles the At again: it must find nothing more to write.
      await sleep(1000);
      assert.equal(writes(), writesBefore + 1, 'one status write per generation');
    };

    await createAt('edited', { schedule: '2019-04-12T10:12:00Z', command: 'sleep 3600' });
    await eventually(() => getPod('edited-pod'));
    await kubelet('edited-pod', 'Running');
    // RUNNING recorded: one write.
    await eventually(() => {
      assert.equal(writes(), 1);
    });
    await edit('sleep 60', 2, 1);
    assert.equal((await getAt('edited')).status?.phase, 'RUNNING');

    await kubelet('edited-pod', 'Succeeded', { exitCode: 0, reason: 'Completed' });
    await eventually(async () => {
      assert.equal((await getAt('edited')).status?.phase, 'DONE');
    });
    await eventually(() => {
      assert.equal(writes(), 3);
    });
    await edit('echo edited', 3, 3);
    const done = await getAt('edited');
    assert.deepEqual([done.status?.phase, done.status?.outcome], ['DONE', 'Succeeded']);
    assert.equal(controller.starts.filter((s) => s.name === 'edited').length, 1);
    assert.equal((await podsOf(done)).length, 1);
  });

  it('deletes the finished pod after ttlSecondsAfterFinished and keeps the At', async () => {
    const at = await createAt('ttl', {
      schedule: '2019-04-12T10:12:00Z',
      command: 'true',
      ttlSecondsAfterFinished: 1,
    });
    await eventually(() => getPod('ttl-pod'));
    await kubelet('ttl-pod', 'Succeeded', { exitCode: 0, reason: 'Completed' });
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 0);
      },
      { timeoutMs: 5000 },
    );
    assert.equal((await getAt('ttl')).status?.outcome, 'Succeeded');
  });

  it('never adopts a foreign pod holding the pod name: condition + Event; runs once the name is free', async () => {
    await client.requestJson('POST', PODS(ns.name), {
      body: {
        metadata: { name: 'squatted-pod', labels: { app: 'someone-else' } },
        spec: {
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'c',
              image: 'busybox:1.37.0',
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
            },
          ],
        },
      },
    });
    const at = await createAt('squatted', { schedule: '2019-04-12T10:12:00Z', command: 'true' });
    await eventually(async () => {
      assert.equal(condition(await getAt('squatted'), 'PodNotOwned'), 'True');
    });
    const waiting = await getAt('squatted');
    assert.equal(waiting.status?.phase, 'PENDING');
    assert.equal(waiting.status.podName, undefined);
    await eventually(async () => {
      assert.ok(
        (await eventsFor('squatted')).some((e) => e.reason === 'PodNotOwned' && e.type === 'Warning'),
      );
    });
    const foreign = await getPod('squatted-pod');
    assert.equal(foreign.metadata?.ownerReferences, undefined);
    assert.equal(foreign.metadata?.labels?.app, 'someone-else');
    // The controller caches only the pods it created (label selector), not the namespace's other pods.
    assert.equal(controller.podCache.get(ns.name, 'squatted-pod'), undefined);
    for (const cached of controller.podCache.list(ns.name))
      assert.equal(cached.metadata?.labels?.['app.kubernetes.io/managed-by'], 'at-scheduler');

    await client.requestJson('DELETE', `${PODS(ns.name)}/squatted-pod`);
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 1);
      },
      { timeoutMs: 15_000 },
    );
    assert.equal(condition(await getAt('squatted'), 'PodNotOwned'), 'False');
    await eventually(() => {
      assert.equal(
        controller.podCache.get(ns.name, 'squatted-pod')?.metadata?.labels?.[AT_UID_LABEL],
        at.metadata?.uid,
      );
    });
  });

  it('a stored schedule that does not parse is reported once (condition + Event), not retried in a loop; a fix runs it', async () => {
    // Only an older CRD could have stored this: loosen the schema for one create, then restore it.
    const crd = loadAtCrd();
    const loose = structuredClone(crd) as AtCrd & {
      spec: {
        versions: [
          {
            schema: {
              openAPIV3Schema: {
                properties: { spec: { properties: { schedule: Record<string, unknown> } } };
              };
            };
          },
        ];
      };
    };
    delete loose.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.schedule.format;
    await installAtCrd(kc, loose);
    try {
      await eventually(() => createAt('garbled', { schedule: 'next tuesday', command: 'true' }), {
        timeoutMs: 10_000,
      });
    } finally {
      await installAtCrd(kc, crd);
    }
    await eventually(async () => {
      assert.equal(condition(await getAt('garbled'), 'InvalidSchedule'), 'True');
    });
    await eventually(async () => {
      assert.ok(
        (await eventsFor('garbled')).some((e) => e.reason === 'InvalidSchedule' && e.type === 'Warning'),
      );
    });
    await sleep(1500);
    assert.equal(controller.statusWrites.get('garbled'), 1, 'one status write, no retry loop');
    assert.equal((await eventsFor('garbled')).length, 1);

    await client.requestJson('PATCH', `${ATS(ns.name)}/garbled`, {
      contentType: MERGE,
      body: { spec: { schedule: '2019-04-12T10:12:00Z' } },
    });
    await eventually(() => getPod('garbled-pod'));
    await eventually(async () => {
      assert.equal(condition(await getAt('garbled'), 'InvalidSchedule'), 'False');
    });
  });

  it('a pod the API server refuses returns the At to PENDING (condition + Event) and is retried later, not in a loop', async () => {
    // Requests above limits: pod validation refuses the create (422), and would every time.
    const at = await createAt('refused', {
      schedule: '2019-04-12T10:12:00Z',
      command: 'true',
      resources: { requests: { memory: '128Mi' }, limits: { memory: '64Mi' } },
    });
    await eventually(async () => {
      assert.ok(
        (await eventsFor('refused')).some((e) => e.reason === 'PodCreateFailed' && e.type === 'Warning'),
      );
    });
    // Each attempt writes RUNNING then PENDING, and each write is a watch event: without a retry delay
    // the At's own status writes would re-enqueue it at once, as fast as the API server answers.
    await sleep(2000);
    assert.equal(controller.statusWrites.get('refused'), 2, 'one attempt, then a wait before the next');
    const scheduledOf = async (): Promise<{ reason: string; lastTransitionTime: string }> => {
      const scheduled = (await getAt('refused')).status?.conditions?.find((c) => c.type === 'Scheduled');
      assert.ok(scheduled);
      return scheduled;
    };
    const refused = await getAt('refused');
    assert.equal(refused.status?.phase, 'PENDING');
    assert.equal(refused.status.podName, undefined);
    const first = await scheduledOf();
    assert.equal(first.reason, 'PodCreateFailed');
    assert.equal((await podsOf(at)).length, 0);
    // The next attempt comes POD_CREATE_RETRY_MS (10 s) after the first failure, and paces the one after it.
    await eventually(
      () => {
        assert.equal(controller.statusWrites.get('refused'), 4);
      },
      { timeoutMs: 15_000 },
    );
    const second = await scheduledOf();
    assert.equal(second.reason, 'PodCreateFailed');
    assert.ok(Date.parse(second.lastTransitionTime) > Date.parse(first.lastTransitionTime));
    await sleep(1000);
    assert.equal(controller.statusWrites.get('refused'), 4, 'the second failure waits as well');
  });

  // Last: the garbage collector discovers a new CRD's resource only on its periodic resync (~30 s).
  it('deleting an At deletes its pod (garbage collection through the owner reference)', async () => {
    const at = await getAt('example-at');
    assert.equal((await podsOf(at)).length, 1);
    await client.requestJson('DELETE', `${ATS(ns.name)}/example-at`);
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 0);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  });
});

describe('at-scheduler restarted mid-run', () => {
  it('a new controller picks up the RUNNING At, records the outcome, and creates no second pod', async () => {
    const kc = loadTestKubeConfig();
    const client = new KubeClient(kc, { rateLimit: false });
    await installAtCrd(kc);
    const ns = await createTestNamespace(kc, 'at-restart');
    try {
      const first = startController(kc, ns.name);
      const at = await client.requestJson<At>('POST', ATS(ns.name), {
        body: {
          apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
          kind: 'At',
          metadata: { name: 'restart' },
          spec: { schedule: '2019-04-12T10:12:00Z', command: 'sleep 5' },
        },
      });
      await eventually(async () => {
        assert.equal(
          (await client.requestJson<At>('GET', `${ATS(ns.name)}/restart`)).status?.phase,
          'RUNNING',
        );
      });
      await eventually(() => client.requestJson('GET', `${PODS(ns.name)}/restart-pod`));
      await first.stop();

      // While no controller runs, the pod finishes.
      await client.requestJson('PATCH', `${PODS(ns.name)}/restart-pod/status`, {
        contentType: MERGE,
        body: {
          status: {
            phase: 'Succeeded',
            containerStatuses: [
              {
                name: 'command',
                image: 'busybox:1.37.0',
                imageID: '',
                ready: false,
                restartCount: 0,
                state: { terminated: { exitCode: 0, reason: 'Completed' } },
              },
            ],
          },
        },
      });
      const second = startController(kc, ns.name);
      try {
        await eventually(async () => {
          assert.equal(
            (await client.requestJson<At>('GET', `${ATS(ns.name)}/restart`)).status?.outcome,
            'Succeeded',
          );
        });
        assert.equal(first.starts.length + second.starts.length, 1);
        const pods = await client.requestJson<{ items: Pod[] }>(
          'GET',
          `${PODS(ns.name)}?labelSelector=${encodeURIComponent(`${POD_SELECTOR},${AT_UID_LABEL}=${at.metadata?.uid ?? ''}`)}`,
        );
        assert.equal(pods.items.length, 1);
      } finally {
        await second.stop();
      }
    } finally {
      await ns.cleanup();
      await client.close();
    }
  });
});

describe('two active controllers on the same Ats (no leader election)', () => {
  it('each At starts exactly once: the resourceVersion precondition lets one of them create the pod, and the other does not misreport it', async () => {
    const kc = loadTestKubeConfig();
    const client = new KubeClient(kc, { rateLimit: false });
    await installAtCrd(kc);
    const ns = await createTestNamespace(kc, 'at-race');
    const first = startController(kc, ns.name);
    const second = startController(kc, ns.name);
    try {
      const names = Array.from({ length: 8 }, (_, i) => `race-${i}`);
      await Promise.all(
        names.map((name) =>
          client.requestJson('POST', ATS(ns.name), {
            body: {
              apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
              kind: 'At',
              metadata: { name },
              spec: { schedule: '2019-04-12T10:12:00Z', command: 'true' },
            },
          }),
        ),
      );
      for (const name of names) {
        await eventually(() => client.requestJson('GET', `${PODS(ns.name)}/${name}-pod`));
        await client.requestJson('PATCH', `${PODS(ns.name)}/${name}-pod/status`, {
          contentType: MERGE,
          body: {
            status: {
              phase: 'Succeeded',
              containerStatuses: [
                {
                  name: 'command',
                  image: 'busybox:1.37.0',
                  imageID: '',
                  ready: false,
                  restartCount: 0,
                  state: { terminated: { exitCode: 0, reason: 'Completed' } },
                },
              ],
            },
          },
        });
      }
      for (const name of names) {
        await eventually(async () => {
          assert.equal(
            (await client.requestJson<At>('GET', `${ATS(ns.name)}/${name}`)).status?.outcome,
            'Succeeded',
          );
        });
        assert.equal([...first.starts, ...second.starts].filter((s) => s.name === name).length, 1, name);
      }
      const pods = await client.requestJson<{ items: Pod[] }>(
        'GET',
        `${PODS(ns.name)}?labelSelector=${encodeURIComponent(POD_SELECTOR)}`,
      );
      assert.equal(pods.items.length, names.length);
    } finally {
      await first.stop();
      await second.stop();
      await ns.cleanup();
      await client.close();
    }
  });
});

describe('the at-scheduler program (src/main.ts)', () => {
  it('starts against KUBECONFIG, leads, serves /readyz and /metrics, runs an At, and exits 0 on SIGTERM', async () => {
    const kc = loadTestKubeConfig();
    const client = new KubeClient(kc, { rateLimit: false });
    await installAtCrd(kc);
    const ns = await createTestNamespace(kc, 'at-main');
    const child = spawn(
      process.execPath,
      ['--conditions=development', fileURLToPath(new URL('./main.ts', import.meta.url))],
      {
        env: {
          ...process.env,
          WATCH_NAMESPACE: ns.name,
          LEADER_ELECTION_NAMESPACE: ns.name,
          // One address: one server for /readyz and /metrics, on a free port it logs.
          HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
          METRICS_BIND_ADDRESS: '127.0.0.1:0',
          LOG_FORMAT: 'json',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: Record<string, unknown>[] = [];
    let stderr = '';
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ message: line });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => {
        resolve(code);
      }),
    );
    try {
      await eventually(
        () => {
          assert.ok(
            lines.some((l) => l.message === 'target cluster' && l.namespaces !== undefined),
            stderr,
          );
        },
        { timeoutMs: 20_000 },
      );
      let port = 0;
      await eventually(
        () => {
          port = Number(lines.find((l) => typeof l.port === 'number')?.port ?? 0);
          assert.ok(port > 0);
        },
        { timeoutMs: 20_000 },
      );
      await eventually(
        async () => {
          assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
        },
        { timeoutMs: 20_000 },
      );
      await client.requestJson('POST', ATS(ns.name), {
        body: {
          apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
          kind: 'At',
          metadata: { name: 'main' },
          spec: { schedule: '2019-04-12T10:12:00Z', command: 'true' },
        },
      });
      await eventually(() => client.requestJson('GET', `${PODS(ns.name)}/main-pod`), { timeoutMs: 20_000 });
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.match(
        metrics,
        new RegExp(`controller_runtime_reconcile_total\\{[^}]*controller="at-scheduler-${ns.name}"`),
      );
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      await ns.cleanup();
      await client.close();
    }
  });
});
