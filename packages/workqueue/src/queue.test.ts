import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import { newRateLimitingQueue, type RateLimitingQueue } from './index.ts';
import { takeReady } from './queue.test-support.ts';

const newQueue = (): RateLimitingQueue<string> => newRateLimitingQueue({ clock: new FakeClock() });

async function getKey(queue: RateLimitingQueue<string>): Promise<string> {
  const item = await queue.get();
  assert.equal(item.shutdown, false);
  return item.key;
}

/** Lets every settled promise's reactions run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('queue: add / get / done', () => {
  it('hands keys out in FIFO order', async () => {
    const queue = newQueue();
    for (const key of ['a', 'b', 'c']) queue.add(key);
    assert.equal(queue.len(), 3);
    assert.deepEqual([await getKey(queue), await getKey(queue), await getKey(queue)], ['a', 'b', 'c']);
    assert.equal(queue.len(), 0);
  });

  it('deduplicates a key that is already waiting, keeping its first position', () => {
    const queue = newQueue();
    for (const key of ['a', 'b', 'a', 'c', 'b', 'a']) queue.add(key);
    assert.equal(queue.len(), 3);
    assert.deepEqual(takeReady(queue), ['a', 'b', 'c']);
  });

  it('accepts the empty string as a key', () => {
    const queue = newQueue();
    queue.add('');
    assert.deepEqual(queue.tryGet(), { key: '', priority: 0, shutdown: false });
  });

  it('does not hand out a key that is being processed, even when added again', async () => {
    const queue = newQueue();
    queue.add('a');
    assert.equal(await getKey(queue), 'a');
    queue.add('a');
    assert.equal(queue.len(), 0, 'a processing key is not queued');
    assert.equal(queue.tryGet(), undefined);

    let second: string | undefined;
    const waiting = getKey(queue).then((key) => (second = key));
    await flush();
    assert.equal(second, undefined, 'a second worker must not get the key while the first one holds it');

    queue.done('a');
    await waiting;
    assert.equal(second, 'a', 'done() releases the re-added key to the waiting worker');
  });

  it('collapses any number of adds during processing into exactly one re-run', () => {
    const queue = newQueue();
    queue.add('a');
    assert.deepEqual(takeReady(queue, false), ['a']);
    for (let i = 0; i < 5; i++) queue.add('a');
    queue.done('a');
    assert.equal(queue.len(), 1);
    assert.deepEqual(takeReady(queue), ['a']);
    assert.equal(queue.tryGet(), undefined, 'no second re-run');
  });

  it('re-queues a re-added key at the back, behind keys added meanwhile', () => {
    const queue = newQueue();
    queue.add('a');
    assert.deepEqual(takeReady(queue, false), ['a']);
    queue.add('a');
    queue.add('b');
    queue.done('a');
    assert.deepEqual(takeReady(queue), ['b', 'a']);
  });

  it('does not re-run a key that was not added during processing', () => {
    const queue = newQueue();
    queue.add('a');
    assert.deepEqual(takeReady(queue), ['a']);
    assert.equal(queue.tryGet(), undefined);
  });

  it('ignores done() for a key that is not processing (no duplicate in the queue)', () => {
    const queue = newQueue();
    queue.add('a');
    queue.done('a');
    queue.done('never-added');
    assert.equal(queue.len(), 1);
    assert.deepEqual(takeReady(queue), ['a']);
    assert.equal(queue.tryGet(), undefined);
  });

  it('serves waiting getters in call order', async () => {
    const queue = newQueue();
    const order: string[] = [];
    const getters = [1, 2, 3].map((worker) => getKey(queue).then((key) => order.push(`${worker}:${key}`)));
    queue.add('a');
    queue.add('b');
    queue.add('c');
    await Promise.all(getters);
    assert.deepEqual(order, ['1:a', '2:b', '3:c']);
    assert.equal(queue.len(), 0);
  });

  it('marks a key handed to a waiting getter as processing at once', async () => {
    const queue = newQueue();
    const got = getKey(queue);
    queue.add('a');
    queue.add('a'); // before the getter's promise even settled
    assert.equal(queue.len(), 0, 'the second add waits for done(), it is not queued');
    assert.equal(await got, 'a');
    queue.done('a');
    assert.deepEqual(takeReady(queue), ['a']);
  });

  it('tryGet() returns undefined while get() would wait', () => {
    const queue = newQueue();
    assert.equal(queue.tryGet(), undefined);
  });

  it('never lets two concurrent workers process one key, and re-runs every key added after its last start', async () => {
    // Deterministic interleaving: workers yield a pseudo-random number of times while "processing".
    let seed = 42;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const queue = newQueue();
    const keys = ['a', 'b', 'c', 'd'];
    const inFlight = new Set<string>();
    const runs = new Map<string, number>();
    /** Keys added since their last processing started: each must be processed again. */
    const owed = new Set<string>();
    const yieldTimes = async (times: number): Promise<void> => {
      for (let i = 0; i < times; i++) await Promise.resolve();
    };

    const worker = async (): Promise<void> => {
      for (;;) {
        const item = queue.tryGet() ?? (await queue.get());
        if (item.shutdown) return;
        assert.ok(!inFlight.has(item.key), `${item.key} handed to two workers at once`);
        inFlight.add(item.key);
        owed.delete(item.key);
        runs.set(item.key, (runs.get(item.key) ?? 0) + 1);
        await yieldTimes(Math.floor(random() * 5));
        inFlight.delete(item.key);
        queue.done(item.key);
      }
    };
    const producer = async (): Promise<void> => {
      for (let i = 0; i < 2000; i++) {
        const key = keys[Math.floor(random() * keys.length)] as string;
        queue.add(key);
        owed.add(key);
        await yieldTimes(Math.floor(random() * 3));
      }
    };

    const workers = Array.from({ length: 4 }, worker);
    await producer();
    await queue.shutDownWithDrain();
    // Keys re-queued by done() during the drain are still handed out; wait until the workers saw shutdown.
    await Promise.all(workers);
    assert.deepEqual([...owed], [], 'every add after a run started led to another run');
    assert.ok([...runs.values()].reduce((sum, n) => sum + n) < 2000, 'adds were collapsed');
  });
});

describe('queue: shutdown', () => {
  it('wakes every waiting getter with { shutdown: true }', async () => {
    const queue = newQueue();
    const getters = [queue.get(), queue.get()];
    assert.equal(queue.shuttingDown(), false);
    queue.shutDown();
    assert.equal(queue.shuttingDown(), true);
    assert.deepEqual(await Promise.all(getters), [
      { key: undefined, shutdown: true },
      { key: undefined, shutdown: true },
    ]);
  });

  it('ignores adds after shutdown', async () => {
    const queue = newQueue();
    queue.shutDown();
    queue.add('a');
    assert.equal(queue.len(), 0);
    assert.deepEqual(await queue.get(), { key: undefined, shutdown: true });
    assert.deepEqual(queue.tryGet(), { key: undefined, shutdown: true });
  });

  it('still hands out keys queued before shutdown, then reports shutdown', async () => {
    const queue = newQueue();
    queue.add('a');
    queue.add('b');
    queue.shutDown();
    assert.equal(await getKey(queue), 'a');
    assert.equal(await getKey(queue), 'b');
    assert.deepEqual(await queue.get(), { key: undefined, shutdown: true });
  });

  it('re-queues on done() a key re-added before shutdown, so a draining worker still processes it', async () => {
    const queue = newQueue();
    queue.add('a');
    assert.equal(await getKey(queue), 'a');
    queue.add('a');
    queue.shutDown();
    queue.done('a');
    assert.equal(await getKey(queue), 'a');
    assert.deepEqual(await queue.get(), { key: undefined, shutdown: true });
  });

  it('shutDownWithDrain() resolves only after every in-flight key is done', async () => {
    const queue = newQueue();
    queue.add('a');
    queue.add('b');
    await getKey(queue);
    await getKey(queue);
    let drained = false;
    const drain = queue.shutDownWithDrain().then(() => (drained = true));
    const second = queue.shutDownWithDrain();
    queue.add('c');
    assert.equal(queue.len(), 0, 'adds are ignored while draining');
    queue.done('a');
    await flush();
    assert.equal(drained, false, 'b is still in flight');
    queue.done('b');
    await Promise.all([drain, second]);
    assert.equal(drained, true);
  });

  it('shutDownWithDrain() resolves at once when nothing is in flight', async () => {
    const queue = newQueue();
    queue.add('queued-but-not-taken');
    await queue.shutDownWithDrain();
    assert.equal(
      queue.len(),
      1,
      'ready keys are not dropped: workers take them until get() reports shutdown',
    );
  });

  it('shutDown() after shutDownWithDrain() stops the drain waiting for a stuck worker, as in client-go', async () => {
    const queue = newQueue();
    queue.add('stuck');
    queue.add('ready');
    assert.equal(await getKey(queue), 'stuck');
    let drained = 0;
    const drains = [queue.shutDownWithDrain(), queue.shutDownWithDrain()].map((drain) =>
      drain.then(() => drained++),
    );
    await flush();
    assert.equal(drained, 0, 'a second shutDownWithDrain() does not end the first one');
    queue.shutDown();
    await flush();
    assert.equal(drained, 2, 'shutDown() resolved both drains although "stuck" is still processing');
    await Promise.all(drains);
    assert.equal(await getKey(queue), 'ready', 'ready keys are still handed out');
    queue.done('stuck');
    queue.done('ready');
    assert.deepEqual(await queue.get(), { key: undefined, shutdown: true });
  });

  it('shutDown() is idempotent', async () => {
    const queue = newQueue();
    queue.shutDown();
    queue.shutDown();
    await queue.shutDownWithDrain();
    assert.equal(queue.shuttingDown(), true);
  });
});
