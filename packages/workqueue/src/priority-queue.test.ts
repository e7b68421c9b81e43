import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import {
  LOW_PRIORITY,
  NORMAL_PRIORITY,
  newRateLimitingQueue,
  type Ordering,
  type QueueItem,
  type RateLimiter,
  type RateLimitingQueue,
} from './index.ts';

function setup(ordering: Ordering = 'priority', rateLimiter?: RateLimiter) {
  const clock = new FakeClock();
  const queue = newRateLimitingQueue({ clock, ordering, ...(rateLimiter && { rateLimiter }) });
  return { clock, queue };
}

/** Takes every ready key without waiting, as `key@priority`, marking each done. */
function takeReady(queue: RateLimitingQueue<string>): string[] {
  const taken: string[] = [];
  for (let item = queue.tryGet(); item !== undefined && !item.shutdown; item = queue.tryGet()) {
    taken.push(`${item.key}@${item.priority}`);
    queue.done(item.key);
  }
  return taken;
}

/** Takes the next ready key, which must exist, leaving it processing. */
function take(queue: RateLimitingQueue<string>): { key: string; priority: number } {
  const item = queue.tryGet();
  assert.ok(item !== undefined && !item.shutdown, 'a ready key');
  return { key: item.key, priority: item.priority };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('priorities', () => {
  it("are controller-runtime's: low -100 for initial lists and resyncs, normal 0", () => {
    assert.equal(LOW_PRIORITY, -100);
    assert.equal(NORMAL_PRIORITY, 0);
  });

  for (const ordering of ['priority', 'fifo'] as const) {
    describe(`must be safe integers (${ordering} order)`, () => {
      for (const bad of [Number.NaN, 0.5, Infinity, -Infinity, 2 ** 53]) {
        it(`add, addAfter and addRateLimited throw RangeError for ${bad}, changing nothing`, () => {
          const { clock, queue } = setup(ordering);
          queue.add('a', 1);
          assert.throws(() => {
            queue.add('a', bad);
          }, RangeError);
          assert.throws(() => {
            queue.add('b', bad);
          }, RangeError);
          assert.throws(() => {
            queue.addAfter('c', 10, bad);
          }, RangeError);
          assert.throws(() => {
            queue.addAfter('d', 0, bad);
          }, RangeError);
          assert.throws(() => {
            queue.addRateLimited('e', bad);
          }, /"e": priority .* is not a safe integer/);
          assert.equal(queue.numRequeues('e'), 0, 'no failure recorded');
          clock.step(1000);
          assert.deepEqual(takeReady(queue), ['a@1']);
        });
      }

      it('throws after shutdown too: a programming error, not a race', () => {
        const { queue } = setup(ordering);
        queue.shutDown();
        assert.throws(() => {
          queue.add('a', Number.NaN);
        }, RangeError);
        assert.throws(() => {
          queue.addAfter('a', 5, Number.NaN);
        }, RangeError);
      });

      it('accepts the extremes of the safe integers', () => {
        const { queue } = setup(ordering);
        queue.add('min', Number.MIN_SAFE_INTEGER);
        queue.add('max', Number.MAX_SAFE_INTEGER);
        assert.equal(queue.len(), 2);
      });
    });
  }
});

describe("priority order (ordering: 'priority')", () => {
  it('hands out the highest priority first and, within one priority, the first added first', () => {
    const { queue } = setup();
    queue.add('low-1', LOW_PRIORITY);
    queue.add('normal-1');
    queue.add('high-1', 10);
    queue.add('low-2', LOW_PRIORITY);
    queue.add('normal-2', NORMAL_PRIORITY);
    queue.add('high-2', 10);
    queue.add('lowest', -1000);
    assert.equal(queue.len(), 7);
    assert.deepEqual(takeReady(queue), [
      'high-1@10',
      'high-2@10',
      'normal-1@0',
      'normal-2@0',
      'low-1@-100',
      'low-2@-100',
      'lowest@-1000',
    ]);
    assert.equal(queue.len(), 0);
  });

  it('orders many priorities added in any order', () => {
    const { queue } = setup();
    const priorities = [5, -3, 12, 0, -100, 7, 12, 1, -3, 99, 2];
    priorities.forEach((priority, i) => {
      queue.add(`k${i}`, priority);
    });
    const expected = priorities
      .map((priority, i) => ({ key: `k${i}`, priority, i }))
      .sort((a, b) => b.priority - a.priority || a.i - b.i)
      .map(({ key, priority }) => `${key}@${priority}`);
    assert.deepEqual(takeReady(queue), expected);
  });

  it('an add of a waiting key with a higher priority moves it to the back of that priority', () => {
    const { queue } = setup();
    queue.add('a', LOW_PRIORITY);
    queue.add('b', LOW_PRIORITY);
    queue.add('c');
    queue.add('d', 5);
    queue.add('b');
    assert.equal(queue.len(), 4, 'still one entry per key');
    assert.deepEqual(takeReady(queue), ['d@5', 'c@0', 'b@0', 'a@-100']);
  });

  it('a key can be raised several times, each time to the back of its new priority', () => {
    const { queue } = setup();
    queue.add('a', -5);
    queue.add('b', 1);
    queue.add('c', 2);
    queue.add('a', 1);
    queue.add('a', 2);
    assert.deepEqual(takeReady(queue), ['c@2', 'a@2', 'b@1']);
  });

  it('an add with a lower priority changes nothing', () => {
    const { queue } = setup();
    queue.add('a', 5);
    queue.add('b', 5);
    queue.add('a', LOW_PRIORITY);
    queue.add('a');
    assert.deepEqual(takeReady(queue), ['a@5', 'b@5']);
  });

  it('an add with an equal priority keeps the key in its place', () => {
    const { queue } = setup();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    queue.add('a', NORMAL_PRIORITY);
    assert.deepEqual(takeReady(queue), ['a@0', 'b@0']);
  });

  it('moves the only key of a priority up and down priorities correctly empty out', () => {
    const { queue } = setup();
    queue.add('a', 1);
    queue.add('a', 3);
    queue.add('b', 1);
    queue.add('c', 2);
    assert.deepEqual(takeReady(queue), ['a@3', 'c@2', 'b@1']);
    queue.add('d', 1);
    queue.add('e', 3);
    assert.deepEqual(takeReady(queue), ['e@3', 'd@1']);
  });

  it('hands a key added while getters wait straight to the first getter, with its priority', async () => {
    const { queue } = setup();
    const first = queue.get();
    const second = queue.get();
    queue.add('a', LOW_PRIORITY);
    queue.add('b', 7);
    assert.deepEqual(await first, { key: 'a', priority: LOW_PRIORITY, shutdown: false });
    assert.deepEqual(await second, { key: 'b', priority: 7, shutdown: false });
  });

  describe('adds during processing', () => {
    it('re-queue the key at done with the highest of their priorities, behind keys of that priority', () => {
      const { queue } = setup();
      queue.add('a', LOW_PRIORITY);
      assert.deepEqual(take(queue), { key: 'a', priority: LOW_PRIORITY });
      queue.add('a', LOW_PRIORITY);
      queue.add('a', 5);
      queue.add('a');
      queue.add('x', 10);
      queue.add('y', 5);
      queue.add('z');
      assert.equal(queue.len(), 3, 'a processing key is not in line');
      queue.done('a');
      assert.equal(queue.len(), 4);
      assert.deepEqual(takeReady(queue), ['x@10', 'y@5', 'a@5', 'z@0']);
    });

    it('collapse into exactly one re-run, never while a worker holds the key', async () => {
      const { queue } = setup();
      queue.add('a');
      take(queue);
      for (let priority = -3; priority <= 3; priority++) queue.add('a', priority);
      assert.equal(queue.tryGet(), undefined);
      let second: QueueItem<string> | undefined;
      const waiting = queue.get().then((item) => (second = item));
      await flush();
      assert.equal(second, undefined, 'a second worker must not get the key while the first one holds it');
      queue.done('a');
      await waiting;
      assert.deepEqual(second, { key: 'a', priority: 3, shutdown: false });
      queue.done('a');
      assert.equal(queue.len(), 0, 'exactly one re-run');
      assert.equal(queue.tryGet(), undefined);
    });

    it('a key handed out again is tracked afresh: an earlier high priority does not stick', () => {
      const { queue } = setup();
      queue.add('a', 9);
      take(queue);
      queue.done('a');
      queue.add('a', LOW_PRIORITY);
      queue.add('b');
      assert.deepEqual(takeReady(queue), ['b@0', 'a@-100']);
    });
  });

  describe('delayed adds', () => {
    it('add the key with its priority when the delay ends', () => {
      const { clock, queue } = setup();
      queue.add('normal');
      queue.addAfter('a', 10, 5);
      clock.step(9);
      assert.deepEqual(takeReady(queue), ['normal@0']);
      queue.add('normal');
      clock.step(1);
      assert.deepEqual(takeReady(queue), ['a@5', 'normal@0']);
    });

    it('without a priority add at the normal priority, behind keys that became ready before', () => {
      const { clock, queue } = setup();
      queue.addAfter('a', 10);
      queue.add('b');
      queue.add('low', LOW_PRIORITY);
      clock.step(10);
      assert.deepEqual(takeReady(queue), ['b@0', 'a@0', 'low@-100']);
    });

    it('a key delayed twice keeps the earliest ready time and the highest priority', () => {
      const { clock, queue } = setup();
      queue.addAfter('a', 10, LOW_PRIORITY);
      queue.addAfter('a', 50, 5);
      queue.addAfter('b', 20, 5);
      queue.addAfter('b', 5, LOW_PRIORITY);
      clock.step(5);
      assert.deepEqual(takeReady(queue), ['b@5']);
      clock.step(5);
      assert.deepEqual(takeReady(queue), ['a@5']);
      clock.step(100);
      assert.deepEqual(takeReady(queue), [], 'one add per key');
    });

    it('follow the higher-priority rule when the key is already waiting in line', () => {
      const { clock, queue } = setup();
      queue.add('a', LOW_PRIORITY);
      queue.add('b', 7);
      queue.add('c');
      queue.addAfter('a', 10, 5);
      queue.addAfter('b', 10, 1);
      clock.step(10);
      assert.equal(queue.len(), 3);
      assert.deepEqual(takeReady(queue), ['b@7', 'a@5', 'c@0']);
    });

    it('are independent of a direct add meanwhile: the key runs now and is added again later', () => {
      const { clock, queue } = setup();
      queue.addAfter('a', 10, 5);
      queue.add('a', LOW_PRIORITY);
      assert.deepEqual(takeReady(queue), ['a@-100']);
      clock.step(10);
      assert.deepEqual(takeReady(queue), ['a@5']);
    });

    it('with a delay <= 0 add the key now, with its priority', () => {
      const { queue } = setup();
      queue.add('b');
      queue.addAfter('a', 0, 3);
      queue.addAfter('c', -5, LOW_PRIORITY);
      assert.deepEqual(takeReady(queue), ['a@3', 'b@0', 'c@-100']);
    });

    it('addRateLimited adds after the limiter delay with its priority', () => {
      const { clock, queue } = setup();
      queue.addRateLimited('a', LOW_PRIORITY);
      queue.addRateLimited('b', 2);
      queue.addRateLimited('c');
      queue.add('d', 1);
      clock.step(5);
      assert.deepEqual(takeReady(queue), ['b@2', 'd@1', 'c@0', 'a@-100']);
      assert.equal(queue.numRequeues('a'), 1);
    });

    it('addRateLimited uses the limiter once per call, whatever the priority', () => {
      const delays: string[] = [];
      const limiter: RateLimiter = {
        when: (key) => {
          delays.push(key);
          return 20;
        },
        forget: () => {},
        numRequeues: () => 0,
      };
      const { clock, queue } = setup('priority', limiter);
      queue.addRateLimited('a', 4);
      clock.step(19);
      assert.equal(queue.len(), 0);
      clock.step(1);
      assert.deepEqual(takeReady(queue), ['a@4']);
      assert.deepEqual(delays, ['a']);
    });
  });

  describe('shutdown', () => {
    it('ignores adds of any priority, still hands out ready keys in priority order, then reports shutdown', () => {
      const { queue } = setup();
      queue.add('low', LOW_PRIORITY);
      queue.add('high', 9);
      queue.shutDown();
      queue.add('new', 100);
      queue.add('low', 100);
      assert.deepEqual(takeReady(queue), ['high@9', 'low@-100']);
      assert.deepEqual(queue.tryGet(), { key: undefined, shutdown: true });
    });

    it('re-queues a key added during processing at done, with its priority, for a draining worker', async () => {
      const { queue } = setup();
      queue.add('a');
      queue.add('b', LOW_PRIORITY);
      take(queue);
      queue.add('a', 3);
      const drained = queue.shutDownWithDrain();
      queue.done('a');
      assert.deepEqual(take(queue), { key: 'a', priority: 3 });
      queue.done('a');
      await drained;
      assert.deepEqual(takeReady(queue), ['b@-100']);
      assert.deepEqual(await queue.get(), { key: undefined, shutdown: true });
    });

    it('drops delayed keys of every priority', () => {
      const { clock, queue } = setup();
      queue.addAfter('a', 10, 50);
      queue.addRateLimited('b', LOW_PRIORITY);
      queue.shutDown();
      clock.step(1000);
      assert.equal(queue.len(), 0);
      assert.equal(clock.pendingTimers(), 0);
    });

    it('wakes waiting getters with shutdown', async () => {
      const { queue } = setup();
      const waiting = queue.get();
      queue.shutDown();
      assert.deepEqual(await waiting, { key: undefined, shutdown: true });
    });
  });
});

describe("FIFO order (ordering: 'fifo', the default)", () => {
  it('is the default', () => {
    const queue = newRateLimitingQueue({ clock: new FakeClock() });
    queue.add('a', LOW_PRIORITY);
    queue.add('b', 10);
    assert.deepEqual(takeReady(queue), ['a@-100', 'b@10']);
  });

  it('ignores priorities for the order but reports the highest each key was added with', () => {
    const { queue } = setup('fifo');
    queue.add('a', LOW_PRIORITY);
    queue.add('b', 10);
    queue.add('c');
    queue.add('a', 3);
    queue.add('b', LOW_PRIORITY);
    assert.deepEqual(takeReady(queue), ['a@3', 'b@10', 'c@0']);
  });

  it('re-queues a key added during processing at the back, reporting the highest priority of those adds', () => {
    const { queue } = setup('fifo');
    queue.add('a');
    take(queue);
    queue.add('b', 1);
    queue.add('a', 7);
    queue.add('a', LOW_PRIORITY);
    queue.done('a');
    assert.deepEqual(takeReady(queue), ['b@1', 'a@7']);
  });

  it('adds a delayed key with its priority, in order of readiness', () => {
    const { clock, queue } = setup('fifo');
    queue.addAfter('a', 10, 5);
    queue.add('b', LOW_PRIORITY);
    clock.step(10);
    assert.deepEqual(takeReady(queue), ['b@-100', 'a@5']);
  });
});

describe('priority order against a reference model', () => {
  /** The obvious O(n) implementation of the documented rules. */
  class Model {
    readonly ready: { key: string; priority: number; seq: number }[] = [];
    readonly dirty = new Map<string, number>();
    readonly processing = new Set<string>();
    seq = 0;

    add(key: string, priority: number): void {
      const dirtyAt = this.dirty.get(key);
      if (dirtyAt !== undefined && priority <= dirtyAt) return;
      this.dirty.set(key, priority);
      if (this.processing.has(key)) return;
      const index = this.ready.findIndex((entry) => entry.key === key);
      if (index >= 0) this.ready.splice(index, 1);
      this.ready.push({ key, priority, seq: this.seq++ });
    }

    get(): { key: string; priority: number } | undefined {
      this.ready.sort((a, b) => b.priority - a.priority || a.seq - b.seq);
      const next = this.ready.shift();
      if (next === undefined) return undefined;
      this.dirty.delete(next.key);
      this.processing.add(next.key);
      return { key: next.key, priority: next.priority };
    }

    done(key: string): void {
      if (!this.processing.delete(key)) return;
      const dirtyAt = this.dirty.get(key);
      if (dirtyAt !== undefined) this.ready.push({ key, priority: dirtyAt, seq: this.seq++ });
    }
  }

  const prioritySets: [string, number[]][] = [
    ["controller-runtime's and a few more", [LOW_PRIORITY, -1, NORMAL_PRIORITY, 1, 2, 50]],
    ['101 priorities, most of them rare', Array.from({ length: 101 }, (_, i) => i - 50)],
  ];
  for (const [name, priorities] of prioritySets) {
    it(`matches it over 20k random adds, gets and dones: ${name}`, () => {
      let seed = 7;
      const random = (n: number): number => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return Math.floor((seed / 2 ** 31) * n);
      };
      const { queue } = setup();
      const model = new Model();
      const processing: string[] = [];
      for (let step = 0; step < 20_000; step++) {
        const action = random(10);
        if (action < 5) {
          const key = `k${random(60)}`;
          const priority = priorities[random(priorities.length)] as number;
          queue.add(key, priority);
          model.add(key, priority);
        } else if (action < 8) {
          const item = queue.tryGet();
          const expected = model.get();
          assert.deepEqual(
            item === undefined
              ? undefined
              : item.shutdown
                ? 'shutdown'
                : { key: item.key, priority: item.priority },
            expected,
            `step ${step}`,
          );
          if (expected !== undefined) processing.push(expected.key);
        } else if (processing.length > 0) {
          const [key] = processing.splice(random(processing.length), 1) as [string];
          queue.done(key);
          model.done(key);
        }
        assert.equal(queue.len(), model.ready.length, `len at step ${step}`);
      }
    });
  }
});
