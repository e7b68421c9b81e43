import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fnv1a64 } from '../sharding/hash.ts';
import { bucketOf } from '../sharding/space.ts';
import { bucketOfValue, ShardFilter } from './shard-filter.ts';

/** Two uids in different buckets (uids differing in their last byte alone often share the top byte). */
const UID_A = '6f1c2b9e-0d2a-4c1e-9a57-3e8b1f0c4d21';
const UID_B = 'b83e0c51-7a94-4f62-8d1b-c2a9e5f7301a';
const A = bucketOfValue(UID_A);
const B = bucketOfValue(UID_B);

/** Whether `promise` has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('ShardFilter', () => {
  it('hashes as the API server shards: the top byte of FNV-1a 64 of the value', () => {
    assert.notEqual(A, B);
    assert.equal(A, bucketOf(fnv1a64(UID_A)));
  });

  it('admits a key only while the bucket of its uid is held', () => {
    const filter = new ShardFilter('uid', () => undefined);
    assert.equal(filter.admit('ns/a', UID_A), false);
    filter.hold([A]);
    assert.equal(filter.admit('ns/a', UID_A), true);
    assert.equal(filter.admit('ns/b', UID_B), false);
    void filter.release([A]);
    assert.equal(filter.admit('ns/a', UID_A), false);
  });

  it('finds the bucket of a key without a uid in the primary cache; none cached: not admitted', () => {
    const cache = new Map([['ns/a', UID_A]]);
    const filter = new ShardFilter('uid', (key) => cache.get(key));
    filter.hold([A, B]);
    assert.equal(filter.admit('ns/a', undefined), true);
    assert.equal(filter.admit('ns/gone', undefined), false);
  });

  it('keeps the bucket a key was queued with after its object left the cache, until it is done', () => {
    const cache = new Map([['ns/a', UID_A]]);
    const filter = new ShardFilter('uid', (key) => cache.get(key));
    filter.hold([A]);
    assert.equal(filter.admit('ns/a', UID_A), true);
    cache.delete('ns/a');
    assert.equal(filter.admit('ns/a', undefined), true);
    assert.equal(filter.begin('ns/a'), true);
    filter.end('ns/a', false);
    assert.equal(filter.tracked, 0);
    assert.equal(filter.admit('ns/a', undefined), false);
  });

  it('keeps the bucket of a key requeued by its result, or admitted again during its reconcile', () => {
    const filter = new ShardFilter('uid', () => undefined);
    filter.hold([A]);
    filter.admit('ns/a', UID_A);
    filter.begin('ns/a');
    filter.end('ns/a', true);
    assert.equal(filter.begin('ns/a'), true, 'the retry finds its bucket');
    filter.admit('ns/a', UID_A);
    filter.end('ns/a', false);
    assert.equal(filter.begin('ns/a'), true, 'the event during the reconcile finds its bucket');
    filter.end('ns/a', false);
    assert.equal(filter.tracked, 0);
  });

  it('refuses to begin a key whose bucket was released after it was queued, and forgets it', () => {
    const filter = new ShardFilter('uid', () => undefined);
    filter.hold([A]);
    filter.admit('ns/a', UID_A);
    void filter.release([A]);
    assert.equal(filter.begin('ns/a'), false);
    assert.equal(filter.tracked, 0);
  });

  it('a release resolves at once when none of its keys is in flight', async () => {
    const filter = new ShardFilter('uid', () => undefined);
    filter.hold([A, B]);
    filter.admit('ns/b', UID_B);
    filter.begin('ns/b');
    assert.equal(await settled(filter.release([A])), true);
  });

  it('a release waits for the in-flight reconciles of its buckets, not for the others', async () => {
    const filter = new ShardFilter('uid', () => undefined);
    filter.hold([A, B]);
    filter.admit('ns/a', UID_A);
    filter.admit('ns/b', UID_B);
    filter.begin('ns/a');
    filter.begin('ns/b');
    const released = filter.release([A]);
    assert.equal(filter.admit('ns/a2', UID_A), false, 'released at once: nothing new is admitted');
    filter.end('ns/b', false);
    assert.equal(await settled(released), false);
    filter.end('ns/a', false);
    assert.equal(await settled(released), true);
  });

  it('forgets the keys of drained buckets, queued or waiting for a requeue, and returns them', () => {
    const filter = new ShardFilter('uid', () => undefined);
    filter.hold([A, B]);
    filter.admit('ns/a-queued', UID_A);
    filter.admit('ns/a-requeued', UID_A);
    filter.begin('ns/a-requeued');
    filter.end('ns/a-requeued', true);
    filter.admit('ns/b', UID_B);
    void filter.release([A]);
    assert.deepEqual(filter.forget(new Set([A])), new Set(['ns/a-queued', 'ns/a-requeued']));
    assert.equal(filter.tracked, 1, "the held bucket's key stays");
    assert.equal(filter.begin('ns/b'), true);
  });

  it('does not forget a key still in flight: its end() does', () => {
    const filter = new ShardFilter('uid', () => undefined);
    filter.hold([A]);
    filter.admit('ns/a', UID_A);
    filter.begin('ns/a');
    assert.deepEqual(filter.forget(new Set([A])), new Set());
    assert.equal(filter.tracked, 1);
    filter.end('ns/a', false);
    assert.equal(filter.tracked, 0);
  });

  it("shardBy namespace: a key's bucket is its namespace's, cluster-scoped keys hash ''", () => {
    // Buckets 225, 34 and 203: three different ones.
    const filter = new ShardFilter('namespace', () => undefined);
    filter.hold([bucketOfValue('payments')]);
    assert.equal(filter.admit('payments/x', UID_A), true);
    assert.equal(filter.admit('payments/y', undefined), true);
    assert.equal(filter.admit('search/x', undefined), false);
    assert.equal(filter.admit('cluster-wide', undefined), false);
    filter.hold([bucketOfValue('')]);
    assert.equal(filter.admit('cluster-wide', undefined), true);
  });

  it('tells whether a primary object is in a set of buckets by the field it hashes', () => {
    const byUid = new ShardFilter('uid', () => undefined);
    const byNamespace = new ShardFilter('namespace', () => undefined);
    const obj = { metadata: { namespace: 'payments', name: 'x', uid: UID_A } };
    assert.equal(byUid.objectIn(obj, new Set([A])), true);
    assert.equal(byUid.objectIn(obj, new Set([B])), false);
    assert.equal(byNamespace.objectIn(obj, new Set([bucketOfValue('payments')])), true);
    assert.equal(byNamespace.objectIn(obj, new Set([A])), false);
  });
});
