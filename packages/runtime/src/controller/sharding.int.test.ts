/**
 * A sharded Controller's filter on a real API server, driven by hand (`startBuckets`, `drainBuckets`)
 * instead of a Sharder: which keys it queues, which it drops, what a drain waits for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { KubeClient } from '@loopwright/client';
import { SharedInformerFactory } from '@loopwright/informer';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import winston from 'winston';
import { Controller, type ControllerOptions } from './controller.ts';
import { bucketOfValue } from './shard-filter.ts';

const silent = winston.createLogger({ silent: true });
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** A promise and the function that settles it: a reconcile that waits for the test. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Whether `promise` has settled once pending callbacks and I/O have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  return done;
}

describe('a sharded Controller on a real API server', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let ns: TestNamespace;

  before(async () => {
    kc = loadTestKubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    ns = await createTestNamespace(kc, 'controller-sharding');
  });
  after(() => ns.cleanup());

  const configMaps = (suite: string) => ({
    group: '',
    version: 'v1',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespace: ns.name,
    labelSelector: `suite=${suite}`,
  });

  /** Runs `options` sharded (holding nothing) on synced caches until `stop()`; records its reconciles. */
  async function runSharded(suite: string, options: Partial<ControllerOptions<V1ConfigMap>> = {}) {
    const client = new KubeClient(kc);
    const factory = new SharedInformerFactory({ client, logger: silent });
    const reconciled: string[] = [];
    const gates = new Map<string, Promise<void>>();
    const controller = new Controller<V1ConfigMap>({
      name: suite,
      for: configMaps(suite),
      reconcile: async ({ key }) => {
        reconciled.push(key);
        await gates.get(key);
      },
      ...options,
    });
    controller.requestInformers(factory);
    factory.start();
    await factory.waitForCacheSync();
    const abort = new AbortController();
    const done = controller.run({ factory, client, logger: silent, signal: abort.signal, sharded: true });
    const lister = factory.forResource<V1ConfigMap>(configMaps(suite)).lister;
    return {
      controller,
      reconciled,
      gates,
      /** Waits until the cache holds `name` (with `data.v` = `v`, if given). */
      cached: (name: string, v?: string) =>
        eventually(() => {
          const cm = lister.get(ns.name, name);
          assert.ok(cm);
          if (v !== undefined) assert.equal(cm.data?.v, v);
        }),
      stop: async () => {
        abort.abort();
        await done;
        factory.stop();
        await client.close();
      },
    };
  }

  /** Creates ConfigMaps `<prefix>-<i>` of `suite` until two have uids in different buckets. */
  async function twoBuckets(suite: string, prefix: string) {
    const created: { name: string; key: string; bucket: number }[] = [];
    for (let i = 0; ; i++) {
      const name = `${prefix}-${i}`;
      const cm = await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name, labels: { suite } }, data: { v: '0' } },
      });
      const uid = cm.metadata?.uid;
      assert.ok(uid !== undefined);
      const made = { name, key: `${ns.name}/${name}`, bucket: bucketOfValue(uid) };
      const other = created.find((c) => c.bucket !== made.bucket);
      if (other !== undefined) return { a: other, b: made };
      created.push(made);
    }
  }

  const touch = (name: string, v: string) =>
    core.patchNamespacedConfigMap({ name, namespace: ns.name, body: { data: { v } } }, mergePatch);

  it('queues only the keys of held buckets; starting buckets queues their cached objects', async () => {
    const run = await runSharded('enqueue');
    try {
      const { a, b } = await twoBuckets('enqueue', 'enq');
      await run.cached(a.name);
      await run.cached(b.name);
      run.controller.startBuckets([a.bucket]);
      await eventually(() => {
        assert.deepEqual(run.reconciled, [a.key]);
      });
      // The informer delivers in order: once a's update is reconciled, b's was seen and dropped.
      await touch(b.name, '1');
      await touch(a.name, '1');
      await eventually(() => {
        assert.deepEqual(run.reconciled, [a.key, a.key]);
      });
      run.controller.startBuckets([b.bucket]);
      await eventually(() => {
        assert.deepEqual(run.reconciled, [a.key, a.key, b.key]);
      });
    } finally {
      await run.stop();
    }
  });

  /**
   * One object in each of two buckets, cached, each reconcile held until its gate opens; then both
   * buckets started.
   */
  async function startGated(run: Awaited<ReturnType<typeof runSharded>>, suite: string, prefix: string) {
    const { a, b } = await twoBuckets(suite, prefix);
    await run.cached(a.name);
    await run.cached(b.name);
    const gateA = gate();
    const gateB = gate();
    run.gates.set(a.key, gateA.promise);
    run.gates.set(b.key, gateB.promise);
    run.controller.startBuckets([a.bucket, b.bucket]);
    return { a, b, gateA, gateB };
  }

  it('drops a key queued before its bucket was drained, without reconciling it', async () => {
    const run = await runSharded('dequeue');
    try {
      const { a, b, gateA, gateB } = await startGated(run, 'dequeue', 'deq');
      // One worker: the first key's reconcile holds it while the second waits in the queue behind it.
      await eventually(() => {
        assert.equal(run.reconciled.length, 1);
      });
      const [first, second, open] = run.reconciled[0] === a.key ? [a, b, gateA.open] : [b, a, gateB.open];
      await run.controller.drainBuckets([second.bucket]);
      run.gates.clear();
      await touch(first.name, '1');
      open();
      await eventually(() => {
        assert.deepEqual(run.reconciled, [first.key, first.key]);
      });
    } finally {
      await run.stop();
    }
  });

  it('a drain waits for the in-flight reconcile of its bucket, not for the others', async () => {
    const run = await runSharded('drain', { maxConcurrentReconciles: 2 });
    try {
      const { a, b, gateA, gateB } = await startGated(run, 'drain', 'drn');
      await eventually(() => {
        assert.deepEqual(new Set(run.reconciled), new Set([a.key, b.key]));
      });
      const drained = run.controller.drainBuckets([a.bucket]);
      gateB.open();
      assert.equal(await settled(drained), false, 'a is still reconciling');
      gateA.open();
      assert.equal(await settled(drained), true);
    } finally {
      await run.stop();
    }
  });

  it("a drain drops its keys' requeues: the bucket taken back is reconciled afresh, not by an old requeue", async () => {
    // The first reconcile asks to come back in 2 s, the later ones in a minute: a reconcile around 2 s
    // after the first can only be the old requeue, left in the queue by the drain.
    const reconciledAt: number[] = [];
    const run = await runSharded('requeue', {
      reconcile: () => {
        reconciledAt.push(Date.now());
        return Promise.resolve({ requeueAfterMs: reconciledAt.length === 1 ? 2000 : 60_000 });
      },
    });
    try {
      const { a } = await twoBuckets('requeue', 'rq');
      await run.cached(a.name);
      run.controller.startBuckets([a.bucket]);
      await eventually(() => {
        assert.equal(reconciledAt.length, 1);
      });
      await run.controller.drainBuckets([a.bucket]);
      run.controller.startBuckets([a.bucket]);
      await eventually(() => {
        assert.equal(reconciledAt.length, 2, 'taken back: its cached object is queued again');
      });
      const firstAt = reconciledAt[0] as number;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstAt + 3000 - Date.now())));
      assert.equal(reconciledAt.length, 2, 'no reconcile from the requeue of the drained bucket');
    } finally {
      await run.stop();
    }
  });

  it("filters an owned object's event by its controller owner reference's uid, without a lookup", async () => {
    const secrets = {
      group: '',
      version: 'v1',
      plural: 'secrets',
      namespace: ns.name,
      labelSelector: 'suite=owned',
    };
    const run = await runSharded('owned', { owns: [secrets] });
    try {
      // Owners that are not in the cache at all: the owner reference's uid alone decides.
      const held = '6f1c2b9e-0d2a-4c1e-9a57-3e8b1f0c4d21';
      const other = 'b83e0c51-7a94-4f62-8d1b-c2a9e5f7301a';
      assert.notEqual(bucketOfValue(held), bucketOfValue(other));
      run.controller.startBuckets([bucketOfValue(held)]);
      const ownedBy = (name: string, owner: string, uid: string) =>
        core.createNamespacedSecret({
          namespace: ns.name,
          body: {
            metadata: {
              name,
              labels: { suite: 'owned' },
              ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner, uid, controller: true }],
            },
          },
        });
      await ownedBy('of-other', 'other-owner', other);
      await ownedBy('of-held', 'held-owner', held);
      // The garbage collector may delete the Secrets (their owners do not exist): each event of theirs
      // reconciles the held owner again, and never the other.
      await eventually(() => {
        assert.ok(run.reconciled.length > 0);
        assert.deepEqual(new Set(run.reconciled), new Set([`${ns.name}/held-owner`]));
      });
    } finally {
      await run.stop();
    }
  });

  it("shardBy namespace: a key's bucket is its namespace's", async () => {
    const run = await runSharded('by-namespace', { shardBy: 'namespace' });
    try {
      await core.createNamespacedConfigMap({
        namespace: ns.name,
        body: { metadata: { name: 'by-ns', labels: { suite: 'by-namespace' } } },
      });
      await run.cached('by-ns');
      const mine = bucketOfValue(ns.name);
      run.controller.startBuckets([(mine + 1) % 256]);
      await touch('by-ns', '1');
      await run.cached('by-ns', '1');
      run.controller.startBuckets([mine]);
      await eventually(() => {
        assert.deepEqual(run.reconciled, [`${ns.name}/by-ns`]);
      });
      // Held now: a change reconciles. Had the change above passed, this would be the third.
      await touch('by-ns', '2');
      await eventually(() => {
        assert.deepEqual(run.reconciled, [`${ns.name}/by-ns`, `${ns.name}/by-ns`]);
      });
    } finally {
      await run.stop();
    }
  });
});
