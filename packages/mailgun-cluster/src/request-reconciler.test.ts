/**
 * The reconciler against an in-memory server that enforces resourceVersion preconditions: what it
 * writes when the cache lags behind its own last write (the race a loaded machine produces).
 */
import { KubeApiError, createSilentLogger } from '@loopwright/runtime';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition } from './conditions.ts';
import type { MailgunCluster } from './generated/types.ts';
import type { KubeWriter, ObjectRef, PatchOptions } from './kube.ts';
import { clusterRequestMail } from './mail.ts';
import { MailgunError, type MailService } from './mailgun.ts';
import { requestReconciler, type CapiObject } from './request-reconciler.ts';

const NOW = new Date('2026-11-22T10:00:00Z');
const owner: CapiObject = { metadata: { namespace: 'ns', name: 'c1', uid: 'owner-uid' } };

/** One object on a "server": merge patches bump the resourceVersion; a stale precondition is a 409. */
class FakeServer implements KubeWriter {
  object: MailgunCluster;
  readonly writes: { patch: Record<string, unknown>; options: PatchOptions }[] = [];
  constructor(object: MailgunCluster) {
    this.object = structuredClone(object);
  }
  mergePatch<T>(_ref: ObjectRef, patch: Record<string, unknown>, options: PatchOptions = {}): Promise<T> {
    this.writes.push({ patch, options });
    if (options.resourceVersion && options.resourceVersion !== this.object.metadata?.resourceVersion) {
      return Promise.reject(
        new KubeApiError('the object has been modified', { status: 409, reason: 'Conflict' }),
      );
    }
    const next = structuredClone(this.object) as unknown as Record<string, Record<string, unknown>>;
    for (const [key, value] of Object.entries(patch)) {
      // JSON merge patch, one level deep as the reconciler writes it: null removes a field.
      const merged = Object.entries({ ...(next[key] ?? {}), ...(value as Record<string, unknown>) });
      next[key] = Object.fromEntries(merged.filter(([, fieldValue]) => fieldValue !== null));
    }
    const version = Number(this.object.metadata?.resourceVersion ?? '0') + 1;
    (next.metadata as { resourceVersion: string }).resourceVersion = String(version);
    this.object = next as unknown as MailgunCluster;
    return Promise.resolve(structuredClone(this.object) as T);
  }
  event(): void {}
}

function mailService(send: MailService['send']): MailService & { sends: number } {
  const service = {
    sends: 0,
    send: (...args: Parameters<MailService['send']>) => {
      service.sends += 1;
      return send(...args);
    },
    findAccepted: () => Promise.resolve(undefined),
  };
  return service;
}

function reconcilerFor(server: FakeServer, mail: MailService, now: () => Date = () => NOW) {
  return requestReconciler<MailgunCluster>(
    {
      kind: 'MailgunCluster',
      plural: 'mailgunclusters',
      ownerKind: 'Cluster',
      getOwner: () => owner,
      clusterOf: () => owner,
      fulfilled: () => false,
      mail: (object, cluster, recipient, markers) =>
        clusterRequestMail({
          ...object.spec,
          clusterName: cluster.metadata?.name ?? '',
          recipient,
          markers,
        }),
    },
    {
      mail,
      kube: server,
      recipient: 'ops@example.com',
      eventsSettleMs: 60_000,
      unauthorizedRetryMs: 60_000,
      now,
    },
  );
}

function reconcileWith(reconcile: ReturnType<typeof reconcilerFor>, cached: MailgunCluster) {
  return reconcile({
    key: 'ns/m1',
    namespace: 'ns',
    name: 'm1',
    object: structuredClone(cached),
    reconcileID: 'r',
    log: createSilentLogger(),
    signal: new AbortController().signal,
  });
}

const fresh: MailgunCluster = {
  metadata: {
    namespace: 'ns',
    name: 'm1',
    uid: 'm1-uid',
    generation: 1,
    resourceVersion: '1',
    ownerReferences: [
      {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        name: 'c1',
        uid: 'owner-uid',
        controller: true,
      },
    ],
  },
  spec: { priority: 'Urgent', request: 'a cluster', requester: 'dev@example.com' },
};

function requestSent(object: MailgunCluster): Condition | undefined {
  return object.status?.conditions?.find((c) => c.type === 'RequestSent');
}

describe('requestReconciler with a cache behind the server', () => {
  it('a rejection stays recorded: the stale claimed version cannot overwrite it, and nothing is sent again', async () => {
    const server = new FakeServer(fresh);
    const mail = mailService(() =>
      Promise.reject(
        new MailgunError('400 invalid from', { kind: 'rejected', maybeSent: false, status: 400 }),
      ),
    );
    const reconcile = reconcilerFor(server, mail);

    assert.equal(await reconcileWith(reconcile, fresh), undefined);
    assert.equal(mail.sends, 1);
    assert.equal(requestSent(server.object)?.reason, 'Rejected');
    assert.equal(server.object.status?.sendAttempt, undefined, 'a provably unsent attempt is released');

    // The cache only has the claim (attempt + Sending) when the object is reconciled again.
    const claimedVersion = {
      ...server.object,
      metadata: { ...server.object.metadata, resourceVersion: '2' },
    };
    claimedVersion.status = {
      ...server.object.status,
      sendAttempt: { id: 'a', startedAt: NOW.toISOString() },
    };
    const writesBefore = server.writes.length;
    assert.deepEqual(await reconcileWith(reconcile, claimedVersion), { requeue: true });
    assert.equal(requestSent(server.object)?.reason, 'Rejected', 'the newer status survives');
    assert.ok(
      server.writes.slice(writesBefore).every((w) => w.options.resourceVersion === '2'),
      'every write from the stale version is conditional on it',
    );

    // Once the cache catches up: nothing to do, nothing sent.
    assert.equal(await reconcileWith(reconcile, server.object), undefined);
    assert.equal(mail.sends, 1);
    assert.equal(requestSent(server.object)?.reason, 'Rejected');
  });

  it('an accepted mail id is recorded even when the object changed after the claim', async () => {
    const server = new FakeServer(fresh);
    const mail = mailService(() => {
      // Someone else writes while the mail is in flight: the claim's version is now stale.
      void server.mergePatch({} as ObjectRef, { metadata: { labels: { touched: 'yes' } } });
      return Promise.resolve('<id-1@mg.example.com>');
    });
    await reconcileWith(reconcilerFor(server, mail), fresh);
    assert.equal(server.object.status?.messageID, '<id-1@mg.example.com>');
    assert.equal(requestSent(server.object)?.reason, 'Accepted');
    assert.equal(
      server.object.metadata?.annotations?.['mailgun.loopwright.dev/message-id'],
      '<id-1@mg.example.com>',
    );
  });

  // Each failure writes status, and that write's watch event reconciles the object again at once: the
  // reconciler itself must hold the next send back, the workqueue's backoff cannot.
  for (const [what, error, waitMs] of [
    ['401', new MailgunError('401', { kind: 'unauthorized', maybeSent: false, status: 401 }), 60_000],
    ['429', new MailgunError('429', { kind: 'retryable', maybeSent: false, status: 429 }), 1000],
  ] as const) {
    it(`${what}: the reconcile its own status write triggers does not send again before the wait`, async () => {
      const server = new FakeServer(fresh);
      let clock = NOW.getTime();
      const mail = mailService(() => Promise.reject(error));
      const reconcile = reconcilerFor(server, mail, () => new Date(clock));
      await reconcileWith(reconcile, fresh).catch((thrown: unknown) => {
        assert.equal(thrown, error);
      });
      assert.equal(mail.sends, 1);
      const writes = server.writes.length;
      assert.deepEqual(await reconcileWith(reconcile, server.object), { requeueAfterMs: waitMs });
      assert.equal(mail.sends, 1, 'not sent again');
      assert.equal(server.writes.length, writes, 'no claim either');
      clock += waitMs;
      await reconcileWith(reconcile, server.object).catch(() => undefined);
      assert.equal(mail.sends, 2, 'sent again once the wait is over');
    });
  }
});
