/**
 * The reconciler against an in-memory fake of `AtApi` and of the runtime's status writer that behaves
 * as the API server does for these calls (status merge patches conditional on resourceVersion, 409 when stale, no new version for a
 * patch that changes nothing; AlreadyExists for a taken pod name; uid preconditions on delete), and a
 * fake of the label-selected pod cache, which may differ from what the server holds.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  KubeApiError,
  NORMAL_PRIORITY,
  TerminalError,
  createSilentLogger,
  type EventInput,
  type ObjectReference,
  type ReconcileResult,
} from '@loopwright/runtime';
import type { AtApi } from './api.ts';
import {
  POD_CREATE_RETRY_MS,
  POD_NOT_OWNED_RECHECK_MS,
  START_GRACE_MS,
  UNCACHED_POD_RECHECK_MS,
} from './decide.ts';
import type { At, AtStatus, AtStatusCondition } from './generated/types.ts';
import { ConditionReason, ConditionType, EventReason } from './reasons.ts';
import { createAtReconciler, type StartObservation } from './reconcile.ts';
import { AT_NAME_LABEL, AT_OUTCOME_FINALIZER, MANAGED_BY_LABEL, type Pod } from './resource.ts';

const NS = 'team';
const NAME = 'nightly';
const POD_NAME = 'nightly-pod';
const AT_UID = 'at-uid';
const GENERATION = 3;
/** On a whole second: `metav1.Time` drops fractions, so transition times equal NOW exactly. */
const NOW = Date.parse('2030-01-01T00:00:10Z');
const PAST = '2030-01-01T00:00:00Z';
const FUTURE_MS = NOW + 60_000;
const FUTURE = new Date(FUTURE_MS).toISOString();
const EARLIER = '2029-12-31T23:00:00Z';

type Call =
  | { method: 'patchAtStatus'; status: Record<string, unknown>; resourceVersion: string; succeeded: boolean }
  | { method: 'createPod'; pod: Pod }
  | { method: 'getPod'; name: string }
  | { method: 'deletePod'; name: string; uid: string }
  | { method: 'releasePod'; name: string; uid: string };

const apiError = (code: number, reason: string, message: string): KubeApiError =>
  KubeApiError.fromStatus({ kind: 'Status', status: 'Failure', code, reason, message });

/** RFC 7386: objects merge, `null` deletes, everything else (arrays included) replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const result = new Map(
    target !== null && typeof target === 'object' && !Array.isArray(target) ? Object.entries(target) : [],
  );
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) result.delete(key);
    else result.set(key, mergePatch(result.get(key), value));
  }
  return Object.fromEntries(result);
}

/** One At and the namespace's pods, as the API server holds them; every call recorded in order. */
class FakeAtApi implements AtApi {
  readonly calls: Call[] = [];
  at: At;
  readonly pods = new Map<string, Pod>();
  /** What the next pod create fails with (once). */
  createError: Error | undefined;
  #nextUid = 1;

  constructor(at: At) {
    this.at = structuredClone(at);
  }

  get patches(): Extract<Call, { method: 'patchAtStatus' }>[] {
    return this.calls.filter((call) => call.method === 'patchAtStatus');
  }

  patchAtStatus(
    namespace: string,
    name: string,
    patch: Record<string, unknown>,
    resourceVersion: string,
  ): Promise<At> {
    assert.deepEqual([namespace, name], [NS, NAME]);
    const call = { method: 'patchAtStatus' as const, status: patch, resourceVersion, succeeded: false };
    this.calls.push(call);
    const current = this.at.metadata?.resourceVersion;
    if (resourceVersion !== current)
      return Promise.reject(
        apiError(
          409,
          'Conflict',
          `Operation cannot be fulfilled on ats.cnat.programming-kubernetes.info "${NAME}": the object has been modified; please apply your changes to the latest version and try again`,
        ),
      );
    call.succeeded = true;
    // A status patch is JSON on the wire: what the server stores is what JSON carries.
    const next = mergePatch(this.at.status ?? {}, JSON.parse(JSON.stringify(patch))) as AtStatus;
    if (JSON.stringify(next) !== JSON.stringify(this.at.status ?? {}))
      this.at = {
        ...this.at,
        metadata: { ...this.at.metadata, resourceVersion: String(Number(current) + 1) },
        status: next,
      };
    return Promise.resolve(structuredClone(this.at));
  }

  createPod(pod: Pod): Promise<void> {
    assert.equal(pod.metadata?.namespace, NS);
    this.calls.push({ method: 'createPod', pod });
    const error = this.createError;
    this.createError = undefined;
    if (error !== undefined) return Promise.reject(error);
    const name = pod.metadata.name ?? '';
    if (this.pods.has(name))
      return Promise.reject(apiError(409, 'AlreadyExists', `pods "${name}" already exists`));
    const created = { ...pod, metadata: { ...pod.metadata, uid: `pod-uid-${this.#nextUid++}` } };
    this.pods.set(name, created);
    return Promise.resolve();
  }

  getPod(namespace: string, name: string): Promise<Pod | undefined> {
    assert.equal(namespace, NS);
    this.calls.push({ method: 'getPod', name });
    return Promise.resolve(this.pods.get(name));
  }

  deletePod(namespace: string, name: string, uid: string): Promise<void> {
    assert.equal(namespace, NS);
    this.calls.push({ method: 'deletePod', name, uid });
    const pod = this.pods.get(name);
    if (pod?.metadata?.uid !== uid) return Promise.resolve();
    // A finalizer holds a deleted pod: it is only marked as being deleted.
    if ((pod.metadata.finalizers?.length ?? 0) > 0)
      this.pods.set(name, {
        ...pod,
        metadata: { ...pod.metadata, deletionTimestamp: new Date(NOW).toISOString() },
      });
    else this.pods.delete(name);
    return Promise.resolve();
  }

  /** As the JSON patch: tests the uid and the finalizer's place; a pod being deleted goes with its last one. */
  releasePod(pod: {
    namespace: string;
    name: string;
    uid: string;
    finalizers: readonly string[];
  }): Promise<void> {
    assert.equal(pod.namespace, NS);
    this.calls.push({ method: 'releasePod', name: pod.name, uid: pod.uid });
    const stored = this.pods.get(pod.name);
    if (!stored) return Promise.resolve();
    const index = pod.finalizers.indexOf(AT_OUTCOME_FINALIZER);
    if (stored.metadata?.uid !== pod.uid || stored.metadata.finalizers?.[index] !== AT_OUTCOME_FINALIZER)
      return Promise.reject(apiError(422, 'Invalid', 'the test operation failed'));
    const finalizers = stored.metadata.finalizers.filter((_, i) => i !== index);
    if (finalizers.length === 0 && stored.metadata.deletionTimestamp !== undefined)
      this.pods.delete(pod.name);
    else this.pods.set(pod.name, { ...stored, metadata: { ...stored.metadata, finalizers } });
    return Promise.resolve();
  }
}

interface World {
  api: FakeAtApi;
  /** The label-selected pod cache the reconciler reads. */
  cache: Map<string, Pod>;
  events: { regarding: ObjectReference; event: EventInput }[];
  starts: StartObservation[];
  /** What the reconciler counted (see metrics.ts), in order. */
  counted: (['podCreated', number, number] | ['finished', string])[];
  now: number;
  /** Reconciles `object` (default: the At as the server holds it now, i.e. an up-to-date cache). */
  reconcile(object?: At | null): Promise<ReconcileResult>;
}

function world(at: At, options: { observeStarts?: boolean } = {}): World {
  const api = new FakeAtApi(at);
  // One reconciler for the world's whole life, as the controller has: it remembers its own writes.
  const reconciler = createAtReconciler({
    api,
    recorder: { event: (regarding, event) => w.events.push({ regarding, event }) },
    pods: { get: (namespace, name) => (namespace === NS ? w.cache.get(name) : undefined) },
    defaultImage: 'busybox:1.37.0',
    now: () => w.now,
    metrics: {
      podCreated: (scheduleMs, createdMs) => w.counted.push(['podCreated', scheduleMs, createdMs]),
      finished: (outcome) => w.counted.push(['finished', outcome]),
    },
    ...(options.observeStarts === false
      ? {}
      : { onStart: (observation: StartObservation) => w.starts.push(observation) }),
  });
  const w: World = {
    api,
    cache: new Map(),
    events: [],
    starts: [],
    counted: [],
    now: NOW,
    reconcile: async (object) => {
      const result = await reconciler({
        key: `${NS}/${NAME}`,
        namespace: NS,
        name: NAME,
        object: object === null ? undefined : structuredClone(object ?? w.api.at),
        // The runtime's status writer, without its memory: the world's cache is whatever the test passes.
        status: {
          patch: (patch, options) =>
            api.patchAtStatus(
              NS,
              NAME,
              (patch as { merge: { status: Record<string, unknown> } }).merge.status,
              options?.resourceVersion ?? '',
            ),
        },
        reconcileID: 'test',
        log: createSilentLogger(),
        signal: new AbortController().signal,
      });
      return result ?? undefined;
    },
  };
  return w;
}

function anAt(spec: Partial<At['spec']> = {}, status?: AtStatus, metadata: Partial<At['metadata']> = {}): At {
  return {
    apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
    kind: 'At',
    metadata: {
      name: NAME,
      namespace: NS,
      uid: AT_UID,
      resourceVersion: '10',
      generation: GENERATION,
      ...metadata,
    },
    spec: { schedule: PAST, command: 'echo hi', ...spec },
    ...(status ? { status } : {}),
  };
}

function condition(
  type: ConditionType,
  conditionStatus: 'True' | 'False',
  reason: string,
  extra: Partial<AtStatusCondition> = {},
): AtStatusCondition {
  return {
    type,
    status: conditionStatus,
    observedGeneration: GENERATION,
    lastTransitionTime: EARLIER,
    reason,
    message: '',
    ...extra,
  };
}

/** A pod of this At (or of `ownerUid`), as the API server returns it. */
function podOf(
  phase: string | undefined,
  options: {
    ownerUid?: string;
    uid?: string;
    terminated?: { exitCode: number; reason?: string; message?: string };
    /** The pod's own, as the kubelet reports an eviction or a node shutdown. */
    reason?: string;
    message?: string;
    /** Default none: a pod of a version before the outcome finalizer, or one released. */
    finalizers?: string[];
    deletionTimestamp?: string;
  } = {},
): Pod {
  return {
    metadata: {
      name: POD_NAME,
      namespace: NS,
      uid: options.uid ?? 'pod-uid',
      ...(options.finalizers ? { finalizers: options.finalizers } : {}),
      ...(options.deletionTimestamp ? { deletionTimestamp: options.deletionTimestamp } : {}),
      labels: { [MANAGED_BY_LABEL]: 'at-scheduler' },
      ownerReferences: [
        {
          apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
          kind: 'At',
          name: NAME,
          uid: options.ownerUid ?? AT_UID,
          controller: true,
        },
      ],
    },
    status: {
      ...(phase === undefined ? {} : { phase }),
      ...(options.reason === undefined ? {} : { reason: options.reason }),
      ...(options.message === undefined ? {} : { message: options.message }),
      ...(options.terminated
        ? { containerStatuses: [{ name: 'command', state: { terminated: options.terminated } }] }
        : {}),
    },
  };
}

const conditionOf = (w: World, type: ConditionType): AtStatusCondition | undefined =>
  w.api.at.status?.conditions?.find((c) => c.type === type);
/** type, reason and action of each Event, in order. */
const eventsOf = (w: World): [string, string, string | undefined][] =>
  w.events.map(({ event }) => [event.type, event.reason, event.action]);
const typesOf = (w: World): string[] => w.api.at.status?.conditions?.map((c) => c.type) ?? [];

/** Every status write records the generation it was decided from. */
function assertObservedGeneration(w: World, generation = GENERATION): void {
  for (const patch of w.api.patches) assert.equal(patch.status.observedGeneration, generation);
}

/** Claimed by a version before the outcome finalizer (no `podFinalizer`). */
const running: AtStatus = {
  phase: 'RUNNING',
  observedGeneration: GENERATION,
  podName: POD_NAME,
  startTime: PAST,
  conditions: [
    condition(ConditionType.Scheduled, 'True', ConditionReason.ScheduleReached),
    condition(ConditionType.Running, 'True', ConditionReason.PodStarted),
  ],
};
/** Claimed for a pod that carries the outcome finalizer. */
const guardedRunning: AtStatus = { ...running, podFinalizer: AT_OUTCOME_FINALIZER };

describe('reconcile: an At that is gone or going', () => {
  it('a deleted At (no object) is left to garbage collection: no call, no Event', async () => {
    const w = world(anAt());
    assert.equal(await w.reconcile(null), undefined);
    w.cache.set(POD_NAME, podOf('Running'));
    assert.equal(await w.reconcile(null), undefined);
    assert.deepEqual(w.api.calls, []);
    assert.deepEqual(w.events, []);
  });

  it('a deleted At whose pod the garbage collector deletes: the pod is released (its outcome finalizer removed), and goes', async () => {
    const w = world(anAt());
    const guarded = podOf('Running', { finalizers: [AT_OUTCOME_FINALIZER] });
    w.api.pods.set(POD_NAME, guarded);
    w.cache.set(POD_NAME, guarded);
    assert.equal(await w.reconcile(null), undefined);
    assert.deepEqual(w.api.calls, [], 'not before the pod is deleted: the At may only lag in the cache');
    const deleting = podOf('Running', { finalizers: [AT_OUTCOME_FINALIZER], deletionTimestamp: EARLIER });
    w.api.pods.set(POD_NAME, deleting);
    w.cache.set(POD_NAME, deleting);
    assert.equal(await w.reconcile(null), undefined);
    assert.deepEqual(w.api.calls, [{ method: 'releasePod', name: POD_NAME, uid: 'pod-uid' }]);
    assert.equal(w.api.pods.has(POD_NAME), false);
    assert.deepEqual(w.events, []);
  });

  it('an At being deleted is not started, even when due', async () => {
    const w = world(anAt({}, undefined, { deletionTimestamp: EARLIER }));
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(w.api.calls, []);
  });

  it('an At being deleted (foreground) while it runs releases its pod, records nothing', async () => {
    const w = world(anAt({}, guardedRunning, { deletionTimestamp: EARLIER }));
    const guarded = podOf('Running', { finalizers: [AT_OUTCOME_FINALIZER] });
    w.api.pods.set(POD_NAME, guarded);
    w.cache.set(POD_NAME, guarded);
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(w.api.calls, [{ method: 'releasePod', name: POD_NAME, uid: 'pod-uid' }]);
    assert.deepEqual(w.api.pods.get(POD_NAME)?.metadata?.finalizers, []);
  });
});

describe('reconcile: PENDING', () => {
  it('a new At costs nothing before its start: no status write, no Event, a sleep exactly until the schedule', async () => {
    for (const status of [undefined, { phase: 'PENDING' as const }]) {
      const w = world(anAt({ schedule: FUTURE }, status));
      assert.deepEqual(await w.reconcile(), { requeueAfterMs: FUTURE_MS - NOW, priority: NORMAL_PRIORITY });
      w.now += 1_000;
      assert.deepEqual(await w.reconcile(), {
        requeueAfterMs: FUTURE_MS - NOW - 1_000,
        priority: NORMAL_PRIORITY,
      });
      assert.deepEqual(w.api.calls, []);
      assert.deepEqual(w.events, []);
    }
  });

  it('a new schedule clears a reported conflict and invalid schedule, and forgets an earlier start', async () => {
    const w = world(
      anAt(
        { schedule: FUTURE },
        {
          phase: 'PENDING',
          observedGeneration: GENERATION - 1,
          podName: 'stale',
          conditions: [
            condition(ConditionType.PodNotOwned, 'True', ConditionReason.PodNotOwned),
            condition(ConditionType.InvalidSchedule, 'True', ConditionReason.InvalidSchedule),
          ],
        },
      ),
    );
    await w.reconcile();
    assert.equal(w.api.at.status?.podName, undefined);
    assert.deepEqual(
      [ConditionType.PodNotOwned, ConditionType.InvalidSchedule].map((type) => {
        const c = conditionOf(w, type);
        return [c?.status, c?.reason, c?.observedGeneration];
      }),
      [
        ['False', ConditionReason.Rescheduled, GENERATION],
        ['False', ConditionReason.ScheduleValid, GENERATION],
      ],
    );
    assertObservedGeneration(w);
  });
});

describe('reconcile: start (at most once)', () => {
  it('records RUNNING first, conditional on the version decided from, then creates the pod', async () => {
    const w = world(anAt());
    assert.deepEqual(
      await w.reconcile(),
      { requeueAfterMs: START_GRACE_MS, priority: NORMAL_PRIORITY },
      "then waits for the pod's event",
    );
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['patchAtStatus', 'createPod'],
    );
    assert.equal(w.api.patches[0]?.resourceVersion, '10');
    const status = w.api.at.status;
    assert.equal(status?.phase, 'RUNNING');
    assert.equal(status.podName, POD_NAME);
    assert.equal(status.podFinalizer, AT_OUTCOME_FINALIZER, 'the claim says its pod is guarded');
    assert.equal(status.startTime, new Date(NOW).toISOString());
    assert.deepEqual(
      [ConditionType.Scheduled, ConditionType.Running].map((type) => [
        conditionOf(w, type)?.status,
        conditionOf(w, type)?.reason,
      ]),
      [
        ['True', ConditionReason.ScheduleReached],
        ['True', ConditionReason.PodStarted],
      ],
    );
    const pod = w.api.pods.get(POD_NAME);
    assert.ok(pod);
    assert.deepEqual(
      pod.metadata?.ownerReferences?.map((ref) => [ref.kind, ref.name, ref.uid, ref.controller]),
      [['At', NAME, AT_UID, true]],
    );
    assert.equal(pod.metadata.labels?.[AT_NAME_LABEL], NAME);
    assert.deepEqual(pod.metadata.finalizers, [AT_OUTCOME_FINALIZER]);
    assert.deepEqual(typesOf(w), [ConditionType.Scheduled, ConditionType.Running]);
    assert.equal(
      (pod.spec as { containers: [{ image: string }] }).containers[0].image,
      'busybox:1.37.0',
      'the default image for an At without spec.image',
    );
    assert.deepEqual(eventsOf(w), [['Normal', EventReason.Started, 'CreatePod']]);
    assert.equal(w.events[0]?.event.note, `created pod ${POD_NAME}`);
    assert.deepEqual(w.events[0].regarding, {
      apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
      kind: 'At',
      namespace: NS,
      name: NAME,
      uid: AT_UID,
    });
    assert.deepEqual(w.starts, [{ namespace: NS, name: NAME, scheduleMs: Date.parse(PAST), issuedMs: NOW }]);
    assertObservedGeneration(w);
  });

  it('starts without an onStart observer (the program passes none)', async () => {
    const w = world(anAt(), { observeStarts: false });
    assert.deepEqual(
      await w.reconcile(),
      { requeueAfterMs: START_GRACE_MS, priority: NORMAL_PRIORITY },
      "then waits for the pod's event",
    );
    assert.equal(w.api.pods.size, 1);
  });

  it('clears a reported conflict or invalid schedule when it starts', async () => {
    const w = world(
      anAt(
        {},
        {
          phase: 'PENDING',
          observedGeneration: GENERATION,
          conditions: [
            condition(ConditionType.PodNotOwned, 'True', ConditionReason.PodNotOwned, {
              observedGeneration: 1,
            }),
            condition(ConditionType.InvalidSchedule, 'True', ConditionReason.InvalidSchedule, {
              observedGeneration: 1,
            }),
          ],
        },
      ),
    );
    await w.reconcile();
    assert.deepEqual(
      [
        conditionOf(w, ConditionType.PodNotOwned)?.reason,
        conditionOf(w, ConditionType.InvalidSchedule)?.reason,
      ],
      [ConditionReason.PodNameFree, ConditionReason.ScheduleValid],
    );
    assert.equal(conditionOf(w, ConditionType.PodNotOwned)?.status, 'False');
    assert.equal(w.api.pods.size, 1);
  });

  it('a RUNNING write that conflicts (a stale cache, another worker or replica) creates no pod and is not an error', async () => {
    const w = world(anAt());
    const stale = structuredClone(w.api.at);
    // Someone else recorded RUNNING meanwhile.
    await w.api.patchAtStatus(NS, NAME, { phase: 'RUNNING', podName: POD_NAME }, '10');
    assert.equal(await w.reconcile(stale), undefined);
    assert.deepEqual(
      w.api.calls.map((call) => [call.method, 'succeeded' in call ? call.succeeded : undefined]),
      [
        ['patchAtStatus', true],
        ['patchAtStatus', false],
      ],
    );
    assert.equal(w.api.pods.size, 0);
    assert.deepEqual(w.events, []);
    assert.deepEqual(w.starts, []);
  });

  it('its own pod found while the status does not record it (status lost) is recorded, not created again', async () => {
    const w = world(anAt());
    w.cache.set(POD_NAME, podOf('Running'));
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['patchAtStatus'],
    );
    assert.equal(w.api.at.status?.phase, 'RUNNING');
    assert.deepEqual(w.starts, []);
    assert.deepEqual(w.events, []);
  });

  it('AlreadyExists for a pod of its own (an earlier create went through): stays RUNNING, no second pod', async () => {
    const w = world(anAt());
    w.api.pods.set(POD_NAME, podOf('Pending'));
    assert.deepEqual(
      await w.reconcile(),
      { requeueAfterMs: START_GRACE_MS, priority: NORMAL_PRIORITY },
      "then waits for the pod's event",
    );
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['patchAtStatus', 'createPod', 'getPod'],
    );
    assert.equal(w.api.at.status?.phase, 'RUNNING');
    assert.equal(w.api.pods.get(POD_NAME)?.metadata?.uid, 'pod-uid');
    assert.deepEqual(w.events, []);
  });

  it('AlreadyExists for a pod it does not control: back to PENDING with PodNotOwned (Event), rechecked later', async () => {
    const w = world(anAt());
    w.api.pods.set(POD_NAME, podOf('Running', { ownerUid: 'someone-else' }));
    assert.deepEqual(await w.reconcile(), {
      requeueAfterMs: POD_NOT_OWNED_RECHECK_MS,
      priority: NORMAL_PRIORITY,
    });
    const [recordRunning, revert] = w.api.patches;
    assert.equal(revert?.resourceVersion, '11', 'the undo is conditional on the RUNNING write it undoes');
    assert.equal(recordRunning?.status.phase, 'RUNNING');
    const status = w.api.at.status;
    assert.equal(status?.phase, 'PENDING');
    assert.equal(status.podName, undefined);
    assert.equal(status.startTime, undefined);
    assert.deepEqual(
      [ConditionType.PodNotOwned, ConditionType.Scheduled, ConditionType.Running].map((type) => [
        conditionOf(w, type)?.status,
        conditionOf(w, type)?.reason,
      ]),
      [
        ['True', ConditionReason.PodNotOwned],
        ['False', ConditionReason.PodNotOwned],
        ['False', ConditionReason.PodNotOwned],
      ],
    );
    assert.deepEqual(eventsOf(w), [['Warning', EventReason.PodNotOwned, 'CreatePod']]);
    assertObservedGeneration(w);
  });

  it('AlreadyExists, and the pod found has no controller owner that is this At, or is gone again: not ours', async () => {
    const merelyReferencing = podOf('Running', { ownerUid: 'someone-else' });
    merelyReferencing.metadata?.ownerReferences?.unshift({
      apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
      kind: 'At',
      name: NAME,
      uid: AT_UID,
      controller: false,
    });
    for (const existing of [merelyReferencing, undefined]) {
      const w = world(anAt());
      if (existing) w.api.pods.set(POD_NAME, existing);
      else w.api.createError = apiError(409, 'AlreadyExists', `pods "${POD_NAME}" already exists`);
      assert.deepEqual(await w.reconcile(), {
        requeueAfterMs: POD_NOT_OWNED_RECHECK_MS,
        priority: NORMAL_PRIORITY,
      });
      assert.equal(w.api.at.status?.phase, 'PENDING');
      assert.equal(conditionOf(w, ConditionType.PodNotOwned)?.status, 'True');
    }
  });

  it('a create the API server refuses (4xx): back to PENDING with PodCreateFailed (redacted, Event), error thrown, retried 10 s later', async () => {
    const w = world(anAt());
    const refusal = apiError(
      422,
      'Invalid',
      'Pod "nightly-pod" is invalid: webhook said Authorization: Basic YXBpOmtleS0xMjM= and Bearer hc_T0k3nV4lu3.x-y',
    );
    w.api.createError = refusal;
    await assert.rejects(w.reconcile(), (error) => error === refusal);
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['patchAtStatus', 'createPod', 'patchAtStatus'],
    );
    assert.equal(w.api.patches[1]?.resourceVersion, '11');
    const status = w.api.at.status;
    assert.equal(status?.phase, 'PENDING');
    assert.equal(status.podName, undefined);
    assert.equal(status.startTime, undefined);
    const scheduled = conditionOf(w, ConditionType.Scheduled);
    assert.equal(scheduled?.status, 'False');
    assert.equal(scheduled.reason, ConditionReason.PodCreateFailed);
    assert.equal(scheduled.lastTransitionTime, '2030-01-01T00:00:10Z');
    assert.match(scheduled.message, /Authorization: Basic \[REDACTED\] and Bearer \[REDACTED\]/);
    assert.doesNotMatch(scheduled.message, /YXBpOmtleS0xMjM=|hc_T0k3nV4lu3/);
    assert.deepEqual(
      [conditionOf(w, ConditionType.Running)?.status, conditionOf(w, ConditionType.Running)?.reason],
      ['False', ConditionReason.PodCreateFailed],
    );
    assert.deepEqual(eventsOf(w), [['Warning', EventReason.PodCreateFailed, 'CreatePod']]);
    assert.equal(w.api.pods.size, 0);
    assertObservedGeneration(w);

    // The thrown error retries it (with backoff): it waits out POD_CREATE_RETRY_MS from the failure, then
    // tries again.
    w.now += 1_000;
    assert.deepEqual(await w.reconcile(), {
      requeueAfterMs: POD_CREATE_RETRY_MS - 1_000,
      priority: NORMAL_PRIORITY,
    });
    assert.equal(w.api.calls.length, 3);
    w.now = NOW + POD_CREATE_RETRY_MS;
    assert.deepEqual(await w.reconcile(), { requeueAfterMs: START_GRACE_MS, priority: NORMAL_PRIORITY });
    assert.equal(w.api.pods.size, 1);
  });

  for (const [code, reason] of [
    [400, 'BadRequest'],
    [403, 'Forbidden'],
    [429, 'TooManyRequests'],
  ] as const) {
    it(`a create refused with ${code} ${reason} made no pod either: back to PENDING with PodCreateFailed`, async () => {
      const w = world(anAt());
      const refusal = apiError(code, reason, 'refused');
      w.api.createError = refusal;
      await assert.rejects(w.reconcile(), (error) => error === refusal);
      assert.equal(w.api.at.status?.phase, 'PENDING');
      assert.equal(conditionOf(w, ConditionType.Scheduled)?.reason, ConditionReason.PodCreateFailed);
    });
  }

  for (const [what, error] of [
    ['a 5xx', apiError(500, 'InternalError', 'etcdserver: request timed out')],
    ['a network error', new KubeApiError('POST /api/v1/namespaces/team/pods: ECONNRESET socket hang up')],
  ] as const) {
    it(`a create that fails with ${what} may have made the pod: RUNNING stays, the error is thrown`, async () => {
      const w = world(anAt());
      w.api.createError = error;
      await assert.rejects(w.reconcile(), (thrown) => thrown === error);
      assert.deepEqual(
        w.api.calls.map((call) => call.method),
        ['patchAtStatus', 'createPod'],
      );
      assert.equal(w.api.at.status?.phase, 'RUNNING');
      assert.equal(w.api.at.status.podName, POD_NAME);
      assert.deepEqual(w.events, []);
    });
  }
});

describe('reconcile: a pod name held by a pod it does not control', () => {
  const foreign = (): Pod => podOf('Running', { ownerUid: 'old-at-uid', uid: 'foreign-uid' });

  it('the pod of an earlier At of the same name, being deleted by the garbage collector: released, then the At runs', async () => {
    const w = world(anAt());
    const leftover = podOf('Running', {
      ownerUid: 'old-at-uid',
      uid: 'leftover-uid',
      finalizers: [AT_OUTCOME_FINALIZER],
      deletionTimestamp: PAST,
    });
    w.api.pods.set(POD_NAME, leftover);
    w.cache.set(POD_NAME, leftover);
    assert.equal(await w.reconcile(), undefined, "the pod's deletion event wakes the At");
    assert.deepEqual(w.api.calls, [{ method: 'releasePod', name: POD_NAME, uid: 'leftover-uid' }]);
    assert.equal(w.api.pods.has(POD_NAME), false);
    w.cache.delete(POD_NAME);
    await w.reconcile();
    assert.deepEqual(
      w.api.calls.slice(1).map((call) => call.method),
      ['patchAtStatus', 'createPod'],
    );
    assert.equal(w.api.pods.get(POD_NAME)?.metadata?.ownerReferences?.[0]?.uid, AT_UID);
  });

  it('is reported once per generation (condition + Event) and checked again every 10 s, never adopted', async () => {
    const w = world(anAt({}, { phase: 'PENDING', observedGeneration: GENERATION }));
    // A pod of an earlier At of the same name still carries the managed-by label: it is in the cache.
    w.cache.set(POD_NAME, foreign());
    w.api.pods.set(POD_NAME, foreign());
    assert.deepEqual(await w.reconcile(), {
      requeueAfterMs: POD_NOT_OWNED_RECHECK_MS,
      priority: NORMAL_PRIORITY,
    });
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['patchAtStatus'],
    );
    assert.equal(conditionOf(w, ConditionType.PodNotOwned)?.status, 'True');
    assert.equal(conditionOf(w, ConditionType.Scheduled)?.reason, ConditionReason.PodNotOwned);
    assert.equal(conditionOf(w, ConditionType.Running), undefined, 'never was running');
    assert.deepEqual(eventsOf(w), [['Warning', EventReason.PodNotOwned, 'CreatePod']]);
    assertObservedGeneration(w);

    assert.deepEqual(await w.reconcile(), {
      requeueAfterMs: POD_NOT_OWNED_RECHECK_MS,
      priority: NORMAL_PRIORITY,
    });
    assert.equal(w.api.patches.length, 1);
    assert.equal(w.events.length, 1);
    assert.equal(w.api.pods.get(POD_NAME)?.metadata?.uid, 'foreign-uid');
  });

  it('once reported, a pod out of the cache is looked up live: still taken, it waits; free, it starts', async () => {
    const w = world(
      anAt(
        {},
        {
          phase: 'PENDING',
          observedGeneration: GENERATION,
          conditions: [condition(ConditionType.PodNotOwned, 'True', ConditionReason.PodNotOwned)],
        },
      ),
    );
    w.api.pods.set(POD_NAME, foreign());
    assert.deepEqual(await w.reconcile(), {
      requeueAfterMs: POD_NOT_OWNED_RECHECK_MS,
      priority: NORMAL_PRIORITY,
    });
    assert.deepEqual(w.api.calls, [{ method: 'getPod', name: POD_NAME }]);

    w.api.pods.delete(POD_NAME);
    assert.deepEqual(await w.reconcile(), { requeueAfterMs: START_GRACE_MS, priority: NORMAL_PRIORITY });
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['getPod', 'getPod', 'patchAtStatus', 'createPod'],
    );
    assert.equal(conditionOf(w, ConditionType.PodNotOwned)?.reason, ConditionReason.PodNameFree);
  });
});

describe('reconcile: an invalid stored schedule', () => {
  it('is reported once (conditions + Warning Event) with a TerminalError; the next reconcile does nothing', async () => {
    const w = world(anAt({ schedule: 'next tuesday' }));
    await assert.rejects(
      w.reconcile(),
      (error) => error instanceof TerminalError && /next tuesday/.test(error.message),
    );
    assert.equal(w.api.at.status?.phase, 'PENDING');
    assert.deepEqual(
      [ConditionType.InvalidSchedule, ConditionType.Scheduled].map((type) => [
        conditionOf(w, type)?.status,
        conditionOf(w, type)?.reason,
      ]),
      [
        ['True', ConditionReason.InvalidSchedule],
        ['False', ConditionReason.InvalidSchedule],
      ],
    );
    assert.deepEqual(eventsOf(w), [['Warning', EventReason.InvalidSchedule, 'Schedule']]);
    assertObservedGeneration(w);

    assert.equal(await w.reconcile(), undefined);
    assert.equal(w.api.calls.length, 1);
    assert.equal(w.events.length, 1);
  });
});

describe('reconcile: RUNNING', () => {
  it('waits for its pod while it runs: no call', async () => {
    const w = world(anAt({}, running));
    w.cache.set(POD_NAME, podOf('Running'));
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(w.api.calls, []);
  });

  it('records success: DONE with exit code, reason, redacted message, completion time, conditions and Event', async () => {
    const w = world(anAt({}, running));
    w.cache.set(
      POD_NAME,
      podOf('Succeeded', {
        terminated: { exitCode: 0, reason: 'Completed', message: 'used Bearer hc_T0k3nV4lu3.x-y' },
      }),
    );
    assert.equal(await w.reconcile(), undefined);
    const status = w.api.at.status;
    assert.deepEqual(
      [
        status?.phase,
        status?.outcome,
        status?.exitCode,
        status?.reason,
        status?.message,
        status?.completionTime,
      ],
      ['DONE', 'Succeeded', 0, 'Completed', 'used Bearer [REDACTED]', new Date(NOW).toISOString()],
    );
    assert.deepEqual(
      [ConditionType.Running, ConditionType.Succeeded].map((type) => [
        conditionOf(w, type)?.status,
        conditionOf(w, type)?.reason,
      ]),
      [
        ['False', ConditionReason.Completed],
        ['True', 'Completed'],
      ],
    );
    assert.equal(
      conditionOf(w, ConditionType.Succeeded)?.message,
      'Completed, exit code 0: used Bearer [REDACTED]',
    );
    assert.equal(conditionOf(w, ConditionType.Failed), undefined);
    assert.deepEqual(
      typesOf(w),
      [ConditionType.Scheduled, ConditionType.Running, ConditionType.Succeeded],
      'the conditions it does not change are kept',
    );
    assert.deepEqual(eventsOf(w), [['Normal', EventReason.Succeeded, 'RunCommand']]);
    assertObservedGeneration(w);
  });

  it('records failure: DONE/Failed with the exit code, a Failed condition and a Warning Failed Event', async () => {
    const w = world(anAt({}, running));
    w.cache.set(POD_NAME, podOf('Failed', { terminated: { exitCode: 3, reason: 'Error', message: 'boom' } }));
    await w.reconcile();
    const status = w.api.at.status;
    assert.deepEqual(
      [status?.phase, status?.outcome, status?.exitCode, status?.reason],
      ['DONE', 'Failed', 3, 'Error'],
    );
    assert.deepEqual(
      [conditionOf(w, ConditionType.Failed)?.status, conditionOf(w, ConditionType.Failed)?.message],
      ['True', 'Error, exit code 3: boom'],
    );
    assert.equal(conditionOf(w, ConditionType.Running)?.reason, 'Error');
    assert.deepEqual(eventsOf(w), [['Warning', EventReason.Failed, 'RunCommand']]);
  });

  it('a reported reason no condition may carry is kept in status.reason; the conditions say Failed', async () => {
    const w = world(anAt({}, running));
    w.cache.set(POD_NAME, podOf('Failed', { reason: 'Node-Shutdown x', message: 'node shut down' }));
    await w.reconcile();
    const status = w.api.at.status;
    assert.deepEqual([status?.phase, status?.outcome, status?.reason], ['DONE', 'Failed', 'Node-Shutdown x']);
    assert.deepEqual(
      [conditionOf(w, ConditionType.Failed)?.reason, conditionOf(w, ConditionType.Failed)?.message],
      [ConditionReason.Failed, 'Node-Shutdown x: node shut down'],
    );
    assert.equal(conditionOf(w, ConditionType.Running)?.reason, ConditionReason.Failed);
    assert.deepEqual(eventsOf(w), [['Warning', EventReason.Failed, 'RunCommand']]);
  });

  it('a pod missing from the cache is looked up live: found outside the cache, it is read again every 10 s', async () => {
    const w = world(anAt({}, running));
    w.api.pods.set(POD_NAME, podOf('Running'));
    assert.deepEqual(await w.reconcile(), {
      requeueAfterMs: UNCACHED_POD_RECHECK_MS,
      priority: NORMAL_PRIORITY,
    });
    assert.deepEqual(w.api.calls, [{ method: 'getPod', name: POD_NAME }]);
  });

  it("an earlier version's recorded pod that is really gone: a grace period after startTime, then DONE/Failed/PodDisappeared, never re-created", async () => {
    const w = world(anAt({}, { ...running, startTime: new Date(NOW - 1_000).toISOString() }));
    assert.deepEqual(await w.reconcile(), {
      requeueAfterMs: START_GRACE_MS - 1_000,
      priority: NORMAL_PRIORITY,
    });
    assert.equal(w.api.calls.length, 0, 'within the grace the cache may lag: nothing is read');
    w.now = NOW + START_GRACE_MS;
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['getPod', 'patchAtStatus'],
    );
    const status = w.api.at.status;
    assert.deepEqual(
      [status?.phase, status?.outcome, status?.reason],
      ['DONE', 'Failed', ConditionReason.PodDisappeared],
    );
    assert.equal(status?.exitCode, undefined);
    assert.match(
      conditionOf(w, ConditionType.Failed)?.message ?? '',
      /^PodDisappeared: the recorded pod \(claimed by an at-scheduler before 0\.1\.5, without the outcome finalizer\) no longer exists/,
    );
    assert.deepEqual(eventsOf(w), [['Warning', EventReason.PodDisappeared, 'RunCommand']]);
  });
  it('a guarded claim with no pod past the grace: the pod was never created; claimed again (conditional), then created once', async () => {
    const w = world(anAt({}, { ...guardedRunning, startTime: new Date(NOW - 1_000).toISOString() }));
    assert.deepEqual(await w.reconcile(), {
      requeueAfterMs: START_GRACE_MS - 1_000,
      priority: NORMAL_PRIORITY,
    });
    assert.equal(w.api.calls.length, 0, 'within the grace the claimer may still be creating it');
    w.now = NOW + START_GRACE_MS;
    assert.deepEqual(await w.reconcile(), { requeueAfterMs: START_GRACE_MS, priority: NORMAL_PRIORITY });
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['getPod', 'patchAtStatus', 'createPod'],
    );
    assert.equal(w.api.patches[0]?.resourceVersion, '10');
    assert.deepEqual(
      [w.api.at.status?.phase, w.api.at.status?.podFinalizer, w.api.at.status?.startTime],
      ['RUNNING', AT_OUTCOME_FINALIZER, new Date(w.now).toISOString()],
    );
    assert.deepEqual(w.api.pods.get(POD_NAME)?.metadata?.finalizers, [AT_OUTCOME_FINALIZER]);
    assert.deepEqual(eventsOf(w), [['Normal', EventReason.Started, 'CreatePod']]);
    assert.equal(w.starts.length, 1);
  });

  it('a guarded claim read from a stale version (the At is DONE since and its pod deleted): 409, no pod created', async () => {
    const w = world(anAt({}, { ...guardedRunning, phase: 'DONE', outcome: 'Succeeded' }));
    // The server's At is one version ahead of the RUNNING this reconcile decides from.
    w.api.at = { ...w.api.at, metadata: { ...w.api.at.metadata, resourceVersion: '11' } };
    assert.equal(await w.reconcile(anAt({}, guardedRunning)), undefined);
    assert.deepEqual(
      w.api.calls.map((call) => [call.method, 'succeeded' in call ? call.succeeded : true]),
      [
        ['getPod', true],
        ['patchAtStatus', false],
      ],
    );
    assert.equal(w.api.pods.size, 0);
  });

  it('a guarded pod that finished: DONE first, then released (never released before the outcome is recorded)', async () => {
    const w = world(anAt({}, guardedRunning));
    const finished = podOf('Succeeded', {
      finalizers: [AT_OUTCOME_FINALIZER],
      terminated: { exitCode: 0, reason: 'Completed' },
    });
    w.api.pods.set(POD_NAME, finished);
    w.cache.set(POD_NAME, finished);
    assert.equal(await w.reconcile(), undefined, "the release's pod event wakes the At for what follows");
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['patchAtStatus', 'releasePod'],
    );
    assert.equal(w.api.at.status?.phase, 'DONE');
    assert.deepEqual(w.api.pods.get(POD_NAME)?.metadata?.finalizers, []);
  });

  it('a guarded pod deleted before it reported completion: DONE/Failed/PodDeleted from the pod still there, then released, and it goes', async () => {
    const w = world(anAt({}, guardedRunning));
    const deleting = podOf('Running', { finalizers: [AT_OUTCOME_FINALIZER], deletionTimestamp: PAST });
    w.api.pods.set(POD_NAME, deleting);
    w.cache.set(POD_NAME, deleting);
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['patchAtStatus', 'releasePod'],
    );
    const status = w.api.at.status;
    assert.deepEqual(
      [status?.phase, status?.outcome, status?.reason],
      ['DONE', 'Failed', ConditionReason.PodDeleted],
    );
    assert.equal(conditionOf(w, ConditionType.Failed)?.reason, ConditionReason.PodDeleted);
    assert.deepEqual(eventsOf(w), [['Warning', EventReason.Failed, 'RunCommand']]);
    assert.equal(w.api.pods.has(POD_NAME), false, 'released, the deleted pod is gone');
  });

  it('a guarded pod outside the cache that finished is released from the live read', async () => {
    const w = world(anAt({}, guardedRunning));
    w.api.pods.set(
      POD_NAME,
      podOf('Failed', { finalizers: [AT_OUTCOME_FINALIZER], terminated: { exitCode: 1, reason: 'Error' } }),
    );
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['getPod', 'patchAtStatus', 'releasePod'],
    );
    assert.deepEqual(w.api.pods.get(POD_NAME)?.metadata?.finalizers, []);
  });

  it('decides the step after DONE in the reconcile that wrote it (its echo reconciles nothing): the ttl wait, or the delete', async () => {
    const w = world(anAt({ ttlSecondsAfterFinished: 60 }, running));
    w.cache.set(POD_NAME, podOf('Succeeded', { uid: 'finished-uid' }));
    assert.deepEqual(await w.reconcile(), { requeueAfterMs: 60_000, priority: NORMAL_PRIORITY });
    assert.equal(w.api.at.status?.phase, 'DONE');

    const gone = world(anAt({ ttlSecondsAfterFinished: 0 }, running));
    gone.cache.set(POD_NAME, podOf('Succeeded', { uid: 'finished-uid' }));
    assert.equal(await gone.reconcile(), undefined);
    assert.deepEqual(
      gone.api.calls.map((call) => call.method),
      ['patchAtStatus', 'deletePod'],
    );
  });
});

describe('reconcile: DONE', () => {
  const done: AtStatus = {
    phase: 'DONE',
    observedGeneration: GENERATION,
    podName: POD_NAME,
    outcome: 'Succeeded',
    completionTime: new Date(NOW - 30_000).toISOString(),
    conditions: [
      condition(ConditionType.Scheduled, 'True', ConditionReason.ScheduleReached),
      condition(ConditionType.Running, 'False', ConditionReason.Completed),
      condition(ConditionType.Succeeded, 'True', 'Completed'),
    ],
  };

  it('does nothing', async () => {
    const w = world(anAt({}, done));
    w.cache.set(POD_NAME, podOf('Succeeded'));
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(w.api.calls, []);
  });

  it('deletes the finished pod after ttlSecondsAfterFinished, only if it is still that pod (uid precondition)', async () => {
    const w = world(anAt({ ttlSecondsAfterFinished: 60 }, done));
    w.cache.set(POD_NAME, podOf('Succeeded', { uid: 'finished-uid' }));
    assert.deepEqual(await w.reconcile(), { requeueAfterMs: 30_000, priority: NORMAL_PRIORITY });
    assert.deepEqual(w.api.calls, []);
    w.now = NOW + 30_000;
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(w.api.calls, [{ method: 'deletePod', name: POD_NAME, uid: 'finished-uid' }]);

    // Deleted but not yet gone (graceful deletion): it is not deleted again.
    const deleting = podOf('Succeeded', { uid: 'finished-uid' });
    w.cache.set(POD_NAME, { ...deleting, metadata: { ...deleting.metadata, deletionTimestamp: PAST } });
    assert.equal(await w.reconcile(), undefined);
    assert.equal(w.api.calls.length, 1);
  });

  it('a pod still holding the outcome finalizer (the release after DONE did not happen) is released before the ttl deletes it', async () => {
    const w = world(anAt({ ttlSecondsAfterFinished: 0 }, done));
    const guarded = podOf('Succeeded', { uid: 'finished-uid', finalizers: [AT_OUTCOME_FINALIZER] });
    w.api.pods.set(POD_NAME, guarded);
    w.cache.set(POD_NAME, guarded);
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(w.api.calls, [{ method: 'releasePod', name: POD_NAME, uid: 'finished-uid' }]);
    // The release's pod event: the ttl deletes it, and nothing holds it any more.
    w.cache.set(POD_NAME, structuredClone(w.api.pods.get(POD_NAME) ?? {}));
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(w.api.calls[1], { method: 'deletePod', name: POD_NAME, uid: 'finished-uid' });
    assert.equal(w.api.pods.has(POD_NAME), false);
  });

  it('an edit is acknowledged once: observedGeneration in status and every condition, nothing else changes', async () => {
    const w = world(anAt({ command: 'echo edited' }, done, { generation: GENERATION + 1 }));
    w.cache.set(POD_NAME, podOf('Succeeded'));
    const stale = structuredClone(w.api.at);
    assert.equal(await w.reconcile(), undefined);
    assert.equal(w.api.patches.length, 1);
    assert.deepEqual(w.api.at.status, {
      ...done,
      observedGeneration: GENERATION + 1,
      conditions: done.conditions?.map((c) => ({ ...c, observedGeneration: GENERATION + 1 })),
    });
    assert.deepEqual(w.events, []);
    assertObservedGeneration(w, GENERATION + 1);

    // Its own write's event: nothing more to write.
    await w.reconcile();
    assert.equal(w.api.patches.length, 1);
    // A reconcile from a cache that has not yet seen that write sends it again, conditional on the old
    // version: refused, so the generation is still acknowledged exactly once.
    assert.equal(await w.reconcile(stale), undefined);
    assert.deepEqual(
      w.api.patches.map((patch) => patch.succeeded),
      [true, false],
    );
    assert.equal(w.api.at.metadata?.resourceVersion, '11');
  });

  it('an edit of an At whose status has no conditions (written before they existed) moves observedGeneration only', async () => {
    const legacy: AtStatus = { phase: 'DONE', observedGeneration: GENERATION, outcome: 'Succeeded' };
    const w = world(anAt({}, legacy, { generation: GENERATION + 1 }));
    assert.equal(await w.reconcile(), undefined);
    assert.deepEqual(w.api.at.status, { ...legacy, observedGeneration: GENERATION + 1 });
  });

  it('an edit while waiting for ttlSecondsAfterFinished is acknowledged and the wait kept', async () => {
    const w = world(anAt({ ttlSecondsAfterFinished: 60 }, done, { generation: GENERATION + 1 }));
    w.cache.set(POD_NAME, podOf('Succeeded'));
    assert.deepEqual(await w.reconcile(), { requeueAfterMs: 30_000, priority: NORMAL_PRIORITY });
    assert.equal(w.api.at.status?.observedGeneration, GENERATION + 1);
  });
});

describe('reconcile: an edited RUNNING At', () => {
  it('is acknowledged once, keeping the running pod and any wait', async () => {
    const w = world(anAt({ command: 'echo edited' }, running, { generation: GENERATION + 1 }));
    w.api.pods.set(POD_NAME, podOf('Running'));
    assert.deepEqual(await w.reconcile(), {
      requeueAfterMs: UNCACHED_POD_RECHECK_MS,
      priority: NORMAL_PRIORITY,
    });
    assert.deepEqual(
      w.api.calls.map((call) => call.method),
      ['getPod', 'patchAtStatus'],
    );
    assert.equal(w.api.at.status?.phase, 'RUNNING');
    assert.deepEqual(
      w.api.at.status.conditions?.map((c) => [c.type, c.status, c.observedGeneration, c.lastTransitionTime]),
      [
        [ConditionType.Scheduled, 'True', GENERATION + 1, EARLIER],
        [ConditionType.Running, 'True', GENERATION + 1, EARLIER],
      ],
    );
    assertObservedGeneration(w, GENERATION + 1);
  });
});

describe('reconcile: what it counts for its metrics', () => {
  it('a pod created: once, with the schedule and the time the create was answered', async () => {
    const w = world(anAt());
    const create = w.api.createPod.bind(w.api);
    w.api.createPod = async (pod) => {
      await create(pod);
      w.now += 250;
    };
    await w.reconcile();
    assert.deepEqual(w.counted, [['podCreated', Date.parse(PAST), NOW + 250]]);
    await w.reconcile();
    assert.equal(w.counted.length, 1, 'a RUNNING At is not counted again');
  });

  it('no pod created: a RUNNING write that conflicts, a refused create, its own pod already there', async () => {
    const conflicting = world(anAt());
    const stale = structuredClone(conflicting.api.at);
    await conflicting.api.patchAtStatus(NS, NAME, { phase: 'RUNNING', podName: POD_NAME }, '10');
    await conflicting.reconcile(stale);
    const refused = world(anAt());
    refused.api.createError = apiError(403, 'Forbidden', 'exceeded quota');
    await assert.rejects(refused.reconcile());
    const adopted = world(anAt());
    adopted.cache.set(POD_NAME, podOf('Running'));
    await adopted.reconcile();
    assert.deepEqual([conflicting.counted, refused.counted, adopted.counted], [[], [], []]);
  });

  it('a finish: once, by outcome, on the DONE write; not by reconciles that find it DONE', async () => {
    const succeeded = world(anAt({}, running));
    succeeded.cache.set(POD_NAME, podOf('Succeeded', { terminated: { exitCode: 0, reason: 'Completed' } }));
    await succeeded.reconcile();
    await succeeded.reconcile();
    const failed = world(anAt({}, running));
    failed.cache.set(POD_NAME, podOf('Failed', { terminated: { exitCode: 1, reason: 'Error' } }));
    await failed.reconcile();
    const disappeared = world(anAt({}, running));
    disappeared.now = Date.parse(PAST) + START_GRACE_MS + 1;
    await disappeared.reconcile();
    assert.equal(disappeared.api.at.status?.reason, ConditionReason.PodDisappeared);
    assert.deepEqual(
      [succeeded.counted, failed.counted, disappeared.counted],
      [[['finished', 'Succeeded']], [['finished', 'Failed']], [['finished', 'Failed']]],
    );
  });

  it('no finish when the DONE write conflicts (another replica wrote it first)', async () => {
    const w = world(anAt({}, running));
    w.cache.set(POD_NAME, podOf('Succeeded', { terminated: { exitCode: 0, reason: 'Completed' } }));
    const stale = structuredClone(w.api.at);
    await w.api.patchAtStatus(NS, NAME, { phase: 'DONE', outcome: 'Succeeded' }, '10');
    assert.equal(await w.reconcile(stale), undefined);
    assert.deepEqual(w.counted, []);
  });
});
