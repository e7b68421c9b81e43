import type { KubeObject } from '@loopwright/informer';
import type { Predicate } from '@loopwright/runtime';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ownerPredicate, requestPredicate, retryRateLimiter } from './controller.ts';
import type { MailgunCluster } from './generated/types.ts';
import { MESSAGE_ID_ANNOTATION, PAUSED_ANNOTATION, type CapiObject } from './resource.ts';

const passes = <T extends KubeObject>(predicate: Predicate<T>, oldObj: T, newObj: T): boolean =>
  predicate.update?.(oldObj, newObj) ?? true;

const object: MailgunCluster = {
  metadata: { namespace: 'ns', name: 'm1', uid: 'm1-uid', generation: 1, resourceVersion: '1' },
  spec: { priority: 'Urgent', request: 'a cluster', requester: 'dev@example.com' },
};
const next = (
  change: Partial<MailgunCluster>,
  metadata: Partial<NonNullable<MailgunCluster['metadata']>> = {},
) => ({
  ...object,
  ...change,
  metadata: { ...object.metadata, resourceVersion: '2', ...metadata },
});

describe('requestPredicate', () => {
  it('drops the update of its own status write: a claim or a failure does not reconcile the object again at once', () => {
    const claimed = next({ status: { sendAttempt: { id: 'a1', startedAt: '2026-01-01T00:00:00Z' } } });
    assert.equal(passes(requestPredicate, object, claimed), false);
    const failed = next({ status: { conditions: [] } });
    assert.equal(passes(requestPredicate, claimed, failed), false);
  });

  it('passes creation and what decides the next step: spec, ownerReferences, the pause and message-id annotations', () => {
    assert.equal(requestPredicate.create?.(object) ?? true, true);
    assert.equal(
      passes(requestPredicate, object, next({ spec: { ...object.spec, request: 'x' } }, { generation: 2 })),
      true,
    );
    assert.equal(
      passes(
        requestPredicate,
        object,
        next(
          {},
          {
            ownerReferences: [
              { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'c1', uid: 'u' },
            ],
          },
        ),
      ),
      true,
    );
    assert.equal(
      passes(requestPredicate, object, next({}, { annotations: { [PAUSED_ANNOTATION]: '' } })),
      true,
    );
    assert.equal(
      passes(requestPredicate, object, next({}, { annotations: { [MESSAGE_ID_ANNOTATION]: '<m1>' } })),
      true,
    );
  });
});

describe('ownerPredicate', () => {
  const owner: CapiObject = {
    metadata: { namespace: 'ns', name: 'c1', generation: 1, resourceVersion: '1' },
    spec: {},
  };

  it('drops status updates of Clusters and Machines: Cluster API mirrors our status into theirs', () => {
    const mirrored = {
      ...owner,
      metadata: { ...owner.metadata, resourceVersion: '2' },
      status: { initialization: { infrastructureProvisioned: true } },
    };
    assert.equal(passes(ownerPredicate, owner, mirrored), false);
  });

  it('passes their creation (an owner appears in the cache) and spec changes (pause, infrastructureRef)', () => {
    assert.equal(ownerPredicate.create?.(owner) ?? true, true);
    const paused = { ...owner, metadata: { ...owner.metadata, generation: 2 }, spec: { paused: true } };
    assert.equal(passes(ownerPredicate, owner, paused), true);
  });
});

describe('retryRateLimiter', () => {
  it('retries a failing object after 1 s, doubling up to 5 min, and starts over once it succeeded', () => {
    const limiter = retryRateLimiter();
    const waits = Array.from({ length: 11 }, () => limiter.when('ns/a'));
    assert.deepEqual(
      waits,
      [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000],
    );
    assert.equal(limiter.when('ns/b'), 1000, 'per object');
    limiter.forget('ns/a');
    assert.equal(limiter.when('ns/a'), 1000);
  });
});
