/**
 * The reconciler against a recording fake of its API: an in-memory "server" holding the one object
 * (merge patches bump its resourceVersion; a stale precondition is a 409, as the API server answers)
 * and a scripted Mailgun. Every step `decide` can choose, every Mailgun failure class, and the races a
 * cache behind the server produces.
 */
import {
  KubeApiError,
  isConflict,
  registerSecret,
  type ObjectKey,
  type ObjectReference,
  type EventInput,
  type ResourceType,
} from '@loopwright/runtime';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import winston from 'winston';
import type { RequestApi } from './api.ts';
import { LOOKUP_SKEW_MS } from './decide.ts';
import type { MailgunCluster, MailgunMachine } from './generated/types.ts';
import { mailgunClusterKind, mailgunMachineKind } from './kinds.ts';
import type { RequestMail } from './mail.ts';
import { MailgunError, type FailureKind } from './mailgun.ts';
import { ConditionType, EventReason, PausedReason, ReadyReason, RequestSentReason } from './reasons.ts';
import { createRequestReconciler, type RequestKind } from './reconcile.ts';
import {
  MESSAGE_ID_ANNOTATION,
  PAUSED_ANNOTATION,
  type CapiObject,
  type RequestObject,
  type StoredCondition,
} from './resource.ts';

const NOW = new Date('2026-11-22T10:00:00Z');
const SETTLE_MS = 60_000;
const UNAUTHORIZED_RETRY_MS = 300_000;
const CREATED = '2026-11-22T09:00:00Z';

type Call =
  | { method: 'patchStatus'; status: Record<string, unknown>; resourceVersion: string | undefined }
  | { method: 'annotateMessageID'; messageID: string }
  | { method: 'event'; regarding: ObjectReference; event: EventInput }
  | { method: 'sendMail'; mail: RequestMail }
  | { method: 'findAcceptedMail'; uid: string; since: Date };

/** RFC 7386: objects merge, `null` deletes, everything else (arrays too) replaces. */
function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const result = new Map<string, unknown>(
    typeof target === 'object' && target !== null && !Array.isArray(target) ? Object.entries(target) : [],
  );
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) result.delete(key);
    else result.set(key, applyMergePatch(result.get(key), value));
  }
  return Object.fromEntries(result);
}

/** The RequestApi over one object on an in-memory server, and Mailgun answering as scripted. */
class FakeApi<T extends RequestObject> implements RequestApi {
  object: T;
  /** The object's resource: a write to any other object is a 404, as the API server answers. */
  readonly #resource: ResourceType;
  readonly calls: Call[] = [];
  /** What each send answers, in order: a message id or a rejection. */
  readonly sends: (string | Error)[] = [];
  /** What the events lookup answers. */
  accepted: string | undefined | Error = undefined;
  /** Runs while a mail is in flight (another writer racing the send). */
  duringSend: (() => void) | undefined;
  /** The API server's answer to the n-th status write (0-based), when it is not a success. */
  readonly statusWriteFailures = new Map<number, Error>();

  constructor(object: T, resource: ResourceType) {
    this.object = structuredClone(object);
    this.#resource = resource;
  }

  callsOf<M extends Call['method']>(method: M): Extract<Call, { method: M }>[] {
    return this.calls.filter((call): call is Extract<Call, { method: M }> => call.method === method);
  }

  /** Another writer (a replica, a user) changes the object: its resourceVersion moves on. */
  write(patch: Record<string, unknown>): void {
    this.#apply(patch);
  }

  patchStatus<R>(
    type: ResourceType,
    key: ObjectKey,
    status: object,
    resourceVersion: string | undefined,
  ): Promise<R> {
    if (!this.#holds(type, key)) return Promise.reject(notFound(type, key));
    this.calls.push({
      method: 'patchStatus',
      status: structuredClone(status) as Record<string, unknown>,
      resourceVersion,
    });
    const failure = this.statusWriteFailures.get(this.callsOf('patchStatus').length - 1);
    if (failure) return Promise.reject(failure);
    if (resourceVersion !== undefined && resourceVersion !== this.object.metadata?.resourceVersion)
      return Promise.reject(
        new KubeApiError('the object has been modified', { status: 409, reason: 'Conflict' }),
      );
    this.#apply({ status });
    return Promise.resolve(structuredClone(this.object) as unknown as R);
  }

  annotateMessageID(type: ResourceType, key: ObjectKey, messageID: string): Promise<void> {
    if (!this.#holds(type, key)) return Promise.reject(notFound(type, key));
    this.calls.push({ method: 'annotateMessageID', messageID });
    this.#apply({ metadata: { annotations: { [MESSAGE_ID_ANNOTATION]: messageID } } });
    return Promise.resolve();
  }

  event(regarding: ObjectReference, event: EventInput): void {
    this.calls.push({ method: 'event', regarding, event });
  }

  sendMail(mail: RequestMail): Promise<string> {
    this.calls.push({ method: 'sendMail', mail });
    this.duringSend?.();
    const answer = this.sends.shift() ?? new Error('the test scripted no answer for this send');
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  }

  findAcceptedMail(uid: string, since: Date): Promise<string | undefined> {
    this.calls.push({ method: 'findAcceptedMail', uid, since });
    return this.accepted instanceof Error ? Promise.reject(this.accepted) : Promise.resolve(this.accepted);
  }

  #holds(type: ResourceType, key: ObjectKey): boolean {
    const { namespace, name } = this.object.metadata ?? {};
    return type === this.#resource && key.namespace === namespace && key.name === name;
  }

  #apply(patch: Record<string, unknown>): void {
    const next = applyMergePatch(this.object, patch) as T;
    const version = Number(this.object.metadata?.resourceVersion ?? '0') + 1;
    this.object = { ...next, metadata: { ...next.metadata, resourceVersion: String(version) } };
  }
}

const notFound = (type: ResourceType, key: ObjectKey): KubeApiError =>
  new KubeApiError(`${type.plural} "${key.namespace}/${key.name}" not found`, {
    status: 404,
    reason: 'NotFound',
  });

/** Log entries, as the runtime's logger would write them. */
function captureLog() {
  const entries: Record<string, unknown>[] = [];
  const stream = new Writable({
    objectMode: true,
    write(entry: Record<string, unknown>, _encoding, done) {
      entries.push(entry);
      done();
    },
  });
  return {
    log: winston.createLogger({ level: 'debug', transports: [new winston.transports.Stream({ stream })] }),
    entries,
  };
}

const ownerReference = (kind: string, name: string, apiVersion = 'cluster.x-k8s.io/v1beta2') => ({
  apiVersion,
  kind,
  name,
  uid: `${name}-uid`,
  controller: true,
});

const fresh: MailgunCluster = {
  metadata: {
    namespace: 'ns',
    name: 'm1',
    uid: 'm1-uid',
    generation: 1,
    resourceVersion: '1',
    creationTimestamp: CREATED,
    ownerReferences: [ownerReference('Cluster', 'c1')],
  },
  spec: { priority: 'Urgent', request: 'a cluster', requester: 'dev@example.com' },
};

function withMetadata(object: MailgunCluster, metadata: Partial<NonNullable<MailgunCluster['metadata']>>) {
  return { ...object, metadata: { ...object.metadata, ...metadata } };
}

function cache(...objects: CapiObject[]) {
  return {
    get: (namespace: string | undefined, name: string) =>
      objects.find((o) => o.metadata?.namespace === namespace && o.metadata?.name === name),
  };
}

const cluster = (spec: CapiObject['spec'] = {}): CapiObject => ({
  metadata: { namespace: 'ns', name: 'c1', uid: 'c1-uid' },
  spec,
});

function setup<T extends RequestObject>(object: T, kind: RequestKind<T>, options: { now?: () => Date } = {}) {
  const api = new FakeApi(object, kind.resource);
  const { log, entries } = captureLog();
  const reconciler = createRequestReconciler({
    kind,
    api,
    recipient: 'ops@example.com',
    eventsSettleMs: SETTLE_MS,
    unauthorizedRetryMs: UNAUTHORIZED_RETRY_MS,
    now: options.now ?? (() => NOW),
  });
  const run = (cached: T | undefined) =>
    reconciler({
      key: 'ns/m1',
      namespace: 'ns',
      name: 'm1',
      object: cached === undefined ? undefined : structuredClone(cached),
      // The reconciler writes status through its RequestApi (the fake's server), never through here.
      status: { patch: () => Promise.reject(new Error('status written through the request')) },
      reconcileID: 'r',
      log,
      signal: new AbortController().signal,
    });
  /** One reconcile of `cached` (default: what the server holds now, a cache that caught up). */
  const reconcile = (cached: T = api.object) => run(cached);
  return { api, reconcile, reconcileGone: () => run(undefined), entries };
}

function clusterSetup(
  object: MailgunCluster = fresh,
  owner: CapiObject = cluster(),
  options: { now?: () => Date } = {},
) {
  return setup(object, mailgunClusterKind(cache(owner)), options);
}

function condition(object: RequestObject, type: string): StoredCondition | undefined {
  return object.status?.conditions?.find((c) => c.type === type);
}

function failure(kind: FailureKind, maybeSent: boolean, statusCode: number | undefined) {
  return new MailgunError(`sending the request mail: ${statusCode ?? 'network failure'}`, {
    kind,
    maybeSent,
    statusCode,
  });
}

describe('createRequestReconciler', () => {
  it('does nothing for an object that is gone', async () => {
    const { api, reconcileGone } = clusterSetup();
    assert.equal(await reconcileGone(), undefined);
    assert.deepEqual(api.calls, []);
  });

  it('waits, writing nothing, until Cluster API sets an ownerReference to a cluster.x-k8s.io Cluster', async () => {
    for (const ownerReferences of [
      [],
      [ownerReference('Cluster', 'c1', 'example.com/v1')],
      [ownerReference('Machine', 'c1')],
    ]) {
      const { api, reconcile, entries } = clusterSetup(withMetadata(fresh, { ownerReferences }));
      assert.equal(await reconcile(), undefined);
      assert.deepEqual(api.calls, []);
      assert.ok(entries.some((e) => e.message === 'waiting for Cluster controller to set OwnerRef'));
    }
  });

  it('waits, writing nothing, while the owner is not in the cache', async () => {
    const { api, reconcile, entries } = setup(fresh, mailgunClusterKind(cache()));
    assert.equal(await reconcile(), undefined);
    assert.deepEqual(api.calls, []);
    assert.ok(entries.some((e) => e.message === 'waiting for owner Cluster c1 to appear'));
  });

  describe('paused', () => {
    it('by the Cluster: reports Paused=True alone, conditional on the cached version, and sends nothing', async () => {
      const { api, reconcile } = clusterSetup(fresh, cluster({ paused: true }));
      assert.equal(await reconcile(), undefined);
      assert.deepEqual(
        api.calls.map((c) => c.method),
        ['patchStatus'],
      );
      const [write] = api.callsOf('patchStatus');
      assert.equal(write?.resourceVersion, '1');
      assert.deepEqual(Object.keys(write.status), ['conditions']);
      assert.deepEqual(
        {
          status: condition(api.object, ConditionType.Paused)?.status,
          reason: condition(api.object, ConditionType.Paused)?.reason,
        },
        { status: 'True', reason: PausedReason.Paused },
      );
      // Reported once: the next reconcile writes nothing.
      assert.equal(await reconcile(), undefined);
      assert.equal(api.calls.length, 1);
    });

    it('by the annotation on the object', async () => {
      const { api, reconcile } = clusterSetup(
        withMetadata(fresh, { annotations: { [PAUSED_ANNOTATION]: '' } }),
      );
      await reconcile();
      assert.equal(api.callsOf('sendMail').length, 0);
      assert.equal(condition(api.object, ConditionType.Paused)?.status, 'True');
    });
  });

  describe('sending', () => {
    it('claims an attempt conditionally, sends the mail with its markers, records the id, annotates, and tells with an Event', async () => {
      const { api, reconcile, entries } = clusterSetup();
      api.sends.push('<id-1@mg.example.com>');
      assert.equal(await reconcile(), undefined);
      assert.deepEqual(
        api.calls.map((c) => c.method),
        ['patchStatus', 'sendMail', 'patchStatus', 'annotateMessageID', 'event'],
      );

      const [claim, record] = api.callsOf('patchStatus');
      assert.equal(claim?.resourceVersion, '1', 'the claim is conditional on the version the decision saw');
      const attempt = claim.status.sendAttempt as { id: string; startedAt: string };
      assert.equal(attempt.startedAt, NOW.toISOString());
      const claimedConditions = claim.status.conditions as StoredCondition[];
      assert.equal(
        claimedConditions.find((c) => c.type === ConditionType.RequestSent)?.reason,
        RequestSentReason.Sending,
      );

      const [send] = api.callsOf('sendMail');
      assert.deepEqual(send?.mail, {
        from: 'dev@example.com',
        to: 'ops@example.com',
        subject: '[Urgent] New Cluster c1 requested',
        text: 'Hello! One cluster please.\n\na cluster\n',
        markers: { uid: 'm1-uid', attempt: attempt.id, object: 'MailgunCluster ns/m1' },
      });

      assert.equal(record?.resourceVersion, undefined, 'the accepted id is recorded unconditionally');
      assert.equal(api.object.status?.messageID, '<id-1@mg.example.com>');
      assert.equal(api.object.metadata?.annotations?.[MESSAGE_ID_ANNOTATION], '<id-1@mg.example.com>');
      assert.equal(condition(api.object, ConditionType.RequestSent)?.reason, RequestSentReason.Accepted);
      assert.equal(condition(api.object, ConditionType.Ready)?.reason, ReadyReason.WaitingForFulfilment);
      assert.equal(condition(api.object, ConditionType.Paused)?.status, 'False');
      assert.deepEqual(
        {
          provisioned: api.object.status.initialization?.provisioned,
          observedGeneration: api.object.status.observedGeneration,
        },
        { provisioned: false, observedGeneration: 1 },
      );
      const [event] = api.callsOf('event');
      assert.deepEqual(event?.event, {
        type: 'Normal',
        reason: EventReason.RequestSent,
        action: 'SendRequestMail',
        note: 'Mailgun accepted the request mail <id-1@mg.example.com>',
      });
      const fields = (message: string) => {
        const entry = entries.find((e) => e.message === message);
        return entry && { action: entry.action, attempt: entry.attempt, messageID: entry.messageID };
      };
      assert.deepEqual(fields('claimed a send attempt'), {
        action: 'claim',
        attempt: attempt.id,
        messageID: undefined,
      });
      assert.deepEqual(fields('Mailgun accepted the request mail'), {
        action: 'claim',
        attempt: attempt.id,
        messageID: '<id-1@mg.example.com>',
      });
      assert.deepEqual(event.regarding, {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
        kind: 'MailgunCluster',
        namespace: 'ns',
        name: 'm1',
        uid: 'm1-uid',
      });

      // Every later reconcile of the recorded object: no write, no mail.
      const calls = api.calls.length;
      assert.equal(await reconcile(), undefined);
      assert.equal(api.calls.length, calls);
    });

    it('a claim lost to another writer (409) sends nothing and fails the reconcile, to be retried once the cache caught up', async () => {
      const { api, reconcile, entries } = clusterSetup();
      api.write({ status: { sendAttempt: { id: 'theirs', startedAt: NOW.toISOString() } } });
      await assert.rejects(reconcile(fresh), (error) => isConflict(error));
      assert.equal(api.callsOf('sendMail').length, 0);
      assert.deepEqual(api.object.status?.sendAttempt, { id: 'theirs', startedAt: NOW.toISOString() });
      assert.ok(entries.some((e) => e.message === 'another writer changed the object first; not sending'));
    });

    it('a claim the API server fails for another reason sends nothing and fails the reconcile with that error', async () => {
      const { api, reconcile, entries } = clusterSetup();
      const unavailable = new KubeApiError('etcdserver: request timed out', {
        status: 500,
        reason: 'InternalError',
      });
      api.statusWriteFailures.set(0, unavailable);
      await assert.rejects(reconcile(), (error) => error === unavailable);
      assert.equal(api.callsOf('sendMail').length, 0);
      assert.equal(
        entries.some((e) => e.message === 'another writer changed the object first; not sending'),
        false,
      );
    });

    it('the accepted id is recorded even when the object changed while the mail was in flight', async () => {
      const { api, reconcile } = clusterSetup();
      api.sends.push('<id-1@mg.example.com>');
      api.duringSend = () => {
        api.write({ metadata: { labels: { touched: 'yes' } } });
      };
      await reconcile();
      assert.equal(api.object.status?.messageID, '<id-1@mg.example.com>');
      assert.equal(condition(api.object, ConditionType.RequestSent)?.reason, RequestSentReason.Accepted);
      assert.equal(api.object.metadata?.annotations?.[MESSAGE_ID_ANNOTATION], '<id-1@mg.example.com>');
    });

    it('an error that is not a Mailgun answer fails the reconcile and leaves the claim to the lookup', async () => {
      const { api, reconcile } = clusterSetup();
      const bug = new Error('not a Mailgun failure');
      api.sends.push(bug);
      await assert.rejects(reconcile(), (error) => error === bug);
      assert.equal(api.callsOf('patchStatus').length, 1, 'only the claim');
      assert.ok(api.object.status?.sendAttempt);
    });
  });

  describe('Mailgun failures', () => {
    it('4xx: Rejected, the attempt released, a Warning Event; done until the spec changes', async () => {
      const { api, reconcile, entries } = clusterSetup();
      api.sends.push(failure('rejected', false, 400));
      assert.equal(await reconcile(), undefined);
      const requestSent = condition(api.object, ConditionType.RequestSent);
      assert.deepEqual(
        [requestSent?.status, requestSent?.reason, requestSent?.message],
        ['False', RequestSentReason.Rejected, 'sending the request mail: 400'],
      );
      assert.equal(condition(api.object, ConditionType.Ready)?.reason, RequestSentReason.Rejected);
      assert.equal(api.object.status?.sendAttempt, undefined, 'a provably unsent attempt is released');
      assert.equal(api.callsOf('patchStatus')[1]?.resourceVersion, '2', 'conditional on the claim');
      assert.deepEqual(api.callsOf('event')[0]?.event, {
        type: 'Warning',
        reason: EventReason.Rejected,
        action: 'SendRequestMail',
        note: 'sending the request mail: 400',
      });
      const logged = entries.find(
        (e) => e.message === 'Mailgun rejected the request mail; not retrying until the spec changes',
      );
      assert.deepEqual(
        [logged?.reason, logged?.statusCode, logged?.error],
        [EventReason.Rejected, 400, 'sending the request mail: 400'],
      );

      // Held: the next reconcile of the same generation sends nothing and writes nothing.
      const calls = api.calls.length;
      assert.equal(await reconcile(), undefined);
      assert.equal(api.calls.length, calls);
      // Paused and resumed meanwhile: reported unpaused again, the rejection as it was, nothing sent.
      api.write({ metadata: { annotations: { [PAUSED_ANNOTATION]: '' } } });
      await reconcile();
      assert.equal(condition(api.object, ConditionType.Paused)?.status, 'True');
      api.write({ metadata: { annotations: { [PAUSED_ANNOTATION]: null } } });
      await reconcile();
      assert.equal(condition(api.object, ConditionType.Paused)?.status, 'False');
      const held = condition(api.object, ConditionType.RequestSent);
      assert.deepEqual(
        [held?.reason, held?.message],
        [RequestSentReason.Rejected, 'sending the request mail: 400'],
      );
      assert.equal(api.callsOf('sendMail').length, 1);
      // A spec change (new generation) sends again.
      api.write({ metadata: { generation: 2 }, spec: { request: 'a corrected request' } });
      api.sends.push('<id-2@mg.example.com>');
      await reconcile();
      assert.equal(api.object.status?.messageID, '<id-2@mg.example.com>');
    });

    it('4xx echoing the credentials: the condition carries neither the key nor the Basic credential', async () => {
      registerSecret('key-3ax6xnjp29jd6fds4gc373sgvjxteol0');
      const { api, reconcile } = clusterSetup();
      api.sends.push(
        new MailgunError(
          'sending the request mail: 400 Authorization: Basic YXBpOmtleS0xMjM= was refused; key key-3ax6xnjp29jd6fds4gc373sgvjxteol0',
          { kind: 'rejected', maybeSent: false, statusCode: 400 },
        ),
      );
      await reconcile();
      assert.equal(
        condition(api.object, ConditionType.RequestSent)?.message,
        'sending the request mail: 400 Authorization: Basic [REDACTED] was refused; key [REDACTED]',
      );
    });

    it('401: Unauthorized, the attempt released, a Warning Event, and the next try after the unauthorized delay', async () => {
      const { api, reconcile, entries } = clusterSetup();
      api.sends.push(failure('unauthorized', false, 401));
      assert.deepEqual(await reconcile(), { requeueAfterMs: UNAUTHORIZED_RETRY_MS });
      assert.equal(condition(api.object, ConditionType.RequestSent)?.reason, RequestSentReason.Unauthorized);
      assert.equal(api.object.status?.sendAttempt, undefined);
      assert.deepEqual(api.callsOf('event')[0]?.event, {
        type: 'Warning',
        reason: EventReason.Unauthorized,
        action: 'SendRequestMail',
        note: "sending the request mail: 401: check the API key (MAILGUN_API_KEY, or the file MAILGUN_API_KEY_FILE names: the chart's Secret) and the domain",
      });
      const logged = entries.find((e) => e.message === 'Mailgun rejected the API key; retrying slowly');
      assert.deepEqual(
        [logged?.action, logged?.reason, logged?.statusCode, logged?.retryAfterMs],
        ['claim', EventReason.Unauthorized, 401, UNAUTHORIZED_RETRY_MS],
      );
      // The retry claims and sends again.
      api.sends.push('<id-1@mg.example.com>');
      await reconcile();
      assert.equal(api.object.status?.messageID, '<id-1@mg.example.com>');
    });

    it('403 or 404: Misconfigured, the attempt released, a Warning Event with the answer, the next try after the unauthorized delay', async () => {
      for (const statusCode of [403, 404]) {
        const { api, reconcile } = clusterSetup();
        api.sends.push(failure('misconfigured', false, statusCode));
        assert.deepEqual(await reconcile(), { requeueAfterMs: UNAUTHORIZED_RETRY_MS });
        const requestSent = condition(api.object, ConditionType.RequestSent);
        assert.deepEqual(
          [requestSent?.status, requestSent?.reason],
          ['False', RequestSentReason.Misconfigured],
        );
        assert.match(
          requestSent?.message ?? '',
          new RegExp(`^sending the request mail: ${statusCode}: check MAILGUN_DOMAIN`),
        );
        assert.equal(api.object.status?.sendAttempt, undefined);
        assert.deepEqual(api.callsOf('event')[0]?.event, {
          type: 'Warning',
          reason: EventReason.Misconfigured,
          action: 'SendRequestMail',
          note: `sending the request mail: ${statusCode}: check MAILGUN_DOMAIN, MAILGUN_URL and what the account may send`,
        });
        // Once the configuration is fixed, the retry claims afresh and sends.
        api.sends.push('<id-1@mg.example.com>');
        await reconcile();
        assert.equal(api.callsOf('findAcceptedMail').length, 0);
        assert.equal(api.object.status?.messageID, '<id-1@mg.example.com>');
      }
    });

    it('429 or a refused connection: MailgunUnavailable, the attempt released, the reconcile fails for a retry with backoff', async () => {
      for (const error of [failure('retryable', false, 429), failure('retryable', false, undefined)]) {
        const { api, reconcile } = clusterSetup();
        api.sends.push(error);
        await assert.rejects(reconcile(), (thrown) => thrown === error);
        assert.equal(
          condition(api.object, ConditionType.RequestSent)?.reason,
          RequestSentReason.MailgunUnavailable,
        );
        assert.equal(api.object.status?.sendAttempt, undefined);
        assert.equal(api.callsOf('event').length, 0);
        // The retry claims afresh: no lookup, no settle window to wait for.
        api.sends.push('<id-1@mg.example.com>');
        await reconcile();
        assert.equal(api.callsOf('findAcceptedMail').length, 0);
        assert.equal(api.object.status?.messageID, '<id-1@mg.example.com>');
      }
    });

    it('5xx or a timeout: ConfirmingDelivery, the attempt kept, the reconcile fails; the retry looks up instead of resending', async () => {
      const { api, reconcile } = clusterSetup();
      const error = failure('retryable', true, 503);
      api.sends.push(error);
      await assert.rejects(reconcile(), (thrown) => thrown === error);
      const requestSent = condition(api.object, ConditionType.RequestSent);
      assert.deepEqual(
        [requestSent?.status, requestSent?.reason],
        ['Unknown', RequestSentReason.ConfirmingDelivery],
      );
      const claimed = api.callsOf('patchStatus')[0]?.status.sendAttempt;
      assert.deepEqual(api.object.status?.sendAttempt, claimed);
      api.accepted = '<id-1@mg.example.com>';
      await reconcile();
      assert.equal(api.callsOf('sendMail').length, 1, 'never resent blindly');
      assert.equal(api.object.status?.messageID, '<id-1@mg.example.com>');
    });

    it('a failure write lost to a newer version leaves the attempt to the lookup and still fails the reconcile', async () => {
      const { api, reconcile, entries } = clusterSetup();
      const error = failure('retryable', false, 429);
      api.sends.push(error);
      api.duringSend = () => {
        api.write({ metadata: { labels: { touched: 'yes' } } });
      };
      await assert.rejects(reconcile(), (thrown) => thrown === error);
      assert.ok(api.object.status?.sendAttempt, 'the attempt stays');
      assert.equal(condition(api.object, ConditionType.RequestSent)?.reason, RequestSentReason.Sending);
      assert.ok(
        entries.some(
          (e) =>
            e.message === 'the object changed since the claim; leaving the attempt to the events lookup' &&
            e.attempt === api.object.status?.sendAttempt?.id,
        ),
      );
    });

    it('a failure write the API server fails for another reason fails the reconcile with that error', async () => {
      const { api, reconcile } = clusterSetup();
      api.sends.push(failure('rejected', false, 400));
      const unavailable = new KubeApiError('etcdserver: request timed out', {
        status: 500,
        reason: 'InternalError',
      });
      api.statusWriteFailures.set(1, unavailable);
      await assert.rejects(reconcile(), (error) => error === unavailable);
      assert.ok(api.object.status?.sendAttempt, 'the attempt stays for the lookup');
    });
  });

  describe('recording', () => {
    it('an id in status without the annotation: reports it and restores the annotation, sends nothing', async () => {
      const { api, reconcile } = clusterSetup({ ...fresh, status: { messageID: '<m1>' } });
      assert.equal(await reconcile(), undefined);
      assert.deepEqual(
        api.calls.map((c) => c.method),
        ['patchStatus', 'annotateMessageID'],
      );
      assert.equal(api.callsOf('patchStatus')[0]?.resourceVersion, '1');
      assert.equal(
        'messageID' in (api.callsOf('patchStatus')[0]?.status ?? {}),
        false,
        'the id is already there',
      );
      assert.equal(api.object.metadata?.annotations?.[MESSAGE_ID_ANNOTATION], '<m1>');
      assert.equal(condition(api.object, ConditionType.RequestSent)?.reason, RequestSentReason.Accepted);
    });

    it('an id only in the annotation (a restore that dropped status): back into status, no mail', async () => {
      const { api, reconcile } = clusterSetup(
        withMetadata(fresh, { annotations: { [MESSAGE_ID_ANNOTATION]: '<m1>' } }),
      );
      await reconcile();
      assert.deepEqual(
        api.calls.map((c) => c.method),
        ['patchStatus'],
      );
      assert.equal(api.object.status?.messageID, '<m1>');
    });

    it('fulfilled: Ready=True and provisioned', async () => {
      const endpoint = { host: 'api.c1.example.com', port: 6443 };
      const { api, reconcile } = clusterSetup({
        ...fresh,
        spec: { ...fresh.spec, controlPlaneEndpoint: endpoint },
        status: { messageID: '<m1>' },
      });
      await reconcile();
      assert.equal(condition(api.object, ConditionType.Ready)?.status, 'True');
      assert.equal(condition(api.object, ConditionType.Ready)?.reason, ReadyReason.Provisioned);
      assert.equal(api.object.status?.initialization?.provisioned, true);
    });
  });

  describe('an attempt without a recorded id', () => {
    const attempt = (agoMs: number) => ({
      id: 'a1',
      startedAt: new Date(NOW.getTime() - agoMs).toISOString(),
    });
    const pending = (agoMs: number): MailgunCluster => ({
      ...fresh,
      status: { sendAttempt: attempt(agoMs) },
    });

    it('found in Mailgun events: recorded, not sent again', async () => {
      const { api, reconcile, entries } = clusterSetup(pending(1000));
      api.accepted = '<found@mg.example.com>';
      assert.equal(await reconcile(), undefined);
      assert.deepEqual(api.callsOf('findAcceptedMail'), [
        { method: 'findAcceptedMail', uid: 'm1-uid', since: new Date(Date.parse(CREATED) - LOOKUP_SKEW_MS) },
      ]);
      assert.equal(api.callsOf('sendMail').length, 0);
      assert.equal(api.object.status?.messageID, '<found@mg.example.com>');
      assert.equal(api.object.metadata?.annotations?.[MESSAGE_ID_ANNOTATION], '<found@mg.example.com>');
      const logged = entries.find(
        (e) => e.message === 'found the request mail of an unrecorded attempt through the events API',
      );
      assert.deepEqual(
        [logged?.action, logged?.attempt, logged?.messageID],
        ['lookup', 'a1', '<found@mg.example.com>'],
      );
    });

    it('not found within the settle window: ConfirmingDelivery, look again later, send nothing', async () => {
      const { api, reconcile, entries } = clusterSetup(pending(SETTLE_MS - 5_000));
      assert.deepEqual(await reconcile(), { requeueAfterMs: 5_000 });
      assert.equal(api.callsOf('sendMail').length, 0);
      const requestSent = condition(api.object, ConditionType.RequestSent);
      assert.deepEqual(
        [requestSent?.status, requestSent?.reason],
        ['Unknown', RequestSentReason.ConfirmingDelivery],
      );
      assert.deepEqual(api.object.status?.sendAttempt, attempt(SETTLE_MS - 5_000));
      const logged = entries.find(
        (e) =>
          e.message === 'send attempt without a recorded message id; waiting before concluding it was lost',
      );
      assert.deepEqual([logged?.action, logged?.attempt, logged?.retryAfterMs], ['lookup', 'a1', 5_000]);
    });

    it('not found after the settle window: a new attempt is claimed and sent', async () => {
      const { api, reconcile, entries } = clusterSetup(pending(SETTLE_MS));
      api.sends.push('<id-2@mg.example.com>');
      await reconcile();
      assert.deepEqual(
        api.calls.map((c) => c.method),
        ['findAcceptedMail', 'patchStatus', 'sendMail', 'patchStatus', 'annotateMessageID', 'event'],
      );
      const claimed = api.callsOf('patchStatus')[0]?.status.sendAttempt as { id: string };
      assert.notEqual(claimed.id, 'a1');
      assert.equal(api.object.status?.messageID, '<id-2@mg.example.com>');
      const logged = entries.find(
        (e) =>
          e.message === 'send attempt settled without any accepted mail in Mailgun events; sending again',
      );
      assert.deepEqual([logged?.level, logged?.action, logged?.attempt], ['warn', 'lookup', 'a1']);
    });

    it('a failed lookup fails the reconcile without writing or sending', async () => {
      const { api, reconcile } = clusterSetup(pending(SETTLE_MS));
      const error = failure('retryable', false, 503);
      api.accepted = error;
      await assert.rejects(reconcile(), (thrown) => thrown === error);
      assert.deepEqual(
        api.calls.map((c) => c.method),
        ['findAcceptedMail'],
      );
    });
  });

  describe('a cache behind the server', () => {
    it('a rejection stays recorded: the stale claimed version cannot overwrite it, and nothing is sent again', async () => {
      const { api, reconcile } = clusterSetup();
      api.sends.push(failure('rejected', false, 400));
      await reconcile();
      assert.equal(condition(api.object, ConditionType.RequestSent)?.reason, RequestSentReason.Rejected);

      // The cache only has the claim (attempt + Sending) when the object is reconciled again.
      const claimedVersion: MailgunCluster = {
        ...withMetadata(api.object, { resourceVersion: '2' }),
        status: { ...api.object.status, sendAttempt: { id: 'a', startedAt: NOW.toISOString() } },
      };
      const writes = api.callsOf('patchStatus').length;
      await assert.rejects(reconcile(claimedVersion), (error) => isConflict(error));
      assert.equal(
        condition(api.object, ConditionType.RequestSent)?.reason,
        RequestSentReason.Rejected,
        'the newer status survives',
      );
      assert.ok(
        api
          .callsOf('patchStatus')
          .slice(writes)
          .every((write) => write.resourceVersion === '2'),
        'every write from the stale version is conditional on it',
      );

      // Once the cache caught up: nothing to do, nothing sent.
      assert.equal(await reconcile(), undefined);
      assert.equal(api.callsOf('sendMail').length, 1);
      assert.equal(condition(api.object, ConditionType.RequestSent)?.reason, RequestSentReason.Rejected);
    });
  });

  describe('MailgunMachine', () => {
    const machine: MailgunMachine = {
      metadata: { ...fresh.metadata, ownerReferences: [ownerReference('Machine', 'worker-1')] },
      spec: { priority: 'BusinessCritical', request: 'one more worker', requester: 'dev@example.com' },
    };
    const owner: CapiObject = {
      metadata: { namespace: 'ns', name: 'worker-1' },
      spec: { clusterName: 'c1' },
    };

    it('asks for a machine of its Machine, naming the Cluster; provisioned once the providerID is set', async () => {
      const { api, reconcile } = setup(machine, mailgunMachineKind(cache(owner), cache(cluster())));
      api.sends.push('<m@mg.example.com>');
      await reconcile();
      assert.equal(
        api.callsOf('sendMail')[0]?.mail.subject,
        '[BusinessCritical] New Machine worker-1 for Cluster c1 requested',
      );
      assert.equal(api.callsOf('sendMail')[0]?.mail.markers.object, 'MailgunMachine ns/m1');
      assert.equal(api.callsOf('event')[0]?.regarding.kind, 'MailgunMachine');
      assert.equal(api.object.status?.initialization?.provisioned, false);
      api.write({ metadata: { generation: 2 }, spec: { providerID: 'mail://worker-1' } });
      await reconcile();
      assert.equal(api.object.status.initialization.provisioned, true);
    });

    it('is paused by the Cluster of its Machine', async () => {
      const { api, reconcile } = setup(
        machine,
        mailgunMachineKind(cache(owner), cache(cluster({ paused: true }))),
      );
      await reconcile();
      assert.equal(api.callsOf('sendMail').length, 0);
      assert.equal(condition(api.object, ConditionType.Paused)?.status, 'True');
    });
  });
});
