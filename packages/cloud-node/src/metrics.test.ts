import { FakeClock } from '@loopwright/core/testing';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { registerNodeMetrics, uninitializedNodes } from './metrics.ts';
import { UNINITIALIZED_TAINT } from './names.ts';
import type { Node, Taint } from './node.ts';

const CREATED = '2030-01-01T00:00:00Z';
const CREATED_MS = Date.parse(CREATED);

/** `creationTimestamp` null: the Node has none. */
function aNode(name: string, taints: Taint[], creationTimestamp: string | null = CREATED): Node {
  return {
    metadata: { name, ...(creationTimestamp === null ? {} : { creationTimestamp }) },
    spec: { taints },
  };
}

const uninitialized = (timeAdded?: string): Taint => ({
  key: UNINITIALIZED_TAINT,
  value: 'true',
  effect: 'NoSchedule',
  ...(timeAdded === undefined ? {} : { timeAdded }),
});

describe('uninitializedNodes', () => {
  it('none: count 0, age 0; Nodes without the taint do not count', () => {
    assert.deepEqual(uninitializedNodes([], CREATED_MS), { count: 0, oldestSeconds: 0 });
    const others = [
      aNode('a', []),
      aNode('b', [{ key: 'other', effect: 'NoSchedule' }]),
      { metadata: { name: 'c' } },
    ];
    assert.deepEqual(uninitializedNodes(others, CREATED_MS + 60_000), { count: 0, oldestSeconds: 0 });
  });

  it('counts every tainted Node; the age is the oldest one, since its creation', () => {
    const nodes = [
      aNode('old', [uninitialized()]),
      aNode('new', [uninitialized()], '2030-01-01T00:01:00Z'),
      aNode('done', []),
    ];
    assert.deepEqual(uninitializedNodes(nodes, CREATED_MS + 90_000), { count: 2, oldestSeconds: 90 });
  });

  it("since the taint's timeAdded when it is set", () => {
    const node = aNode('retainted', [uninitialized('2030-01-01T00:10:00Z')]);
    assert.deepEqual(uninitializedNodes([node], CREATED_MS + 11 * 60_000), { count: 1, oldestSeconds: 60 });
  });

  it('a time that does not parse, is missing or lies ahead: counted, at age 0', () => {
    const timeless = [
      aNode('unparsable', [uninitialized()], 'yesterday'),
      aNode('missing', [uninitialized()], null),
    ];
    assert.deepEqual(uninitializedNodes(timeless, CREATED_MS + 600_000), { count: 2, oldestSeconds: 0 });
    const ahead = aNode('ahead', [uninitialized()], '2030-01-01T00:05:00Z');
    assert.deepEqual(uninitializedNodes([ahead], CREATED_MS), { count: 1, oldestSeconds: 0 });
  });
});

describe('registerNodeMetrics', () => {
  it('both gauges are counted from the cache at each scrape, aged on the clock', async () => {
    const registry = new Registry();
    const clock = new FakeClock({ wallTimeMs: CREATED_MS });
    const cached: Node[] = [];
    registerNodeMetrics(registry, { nodes: { list: () => cached }, clock });
    const gauges = async () =>
      Promise.all(
        ['loopwright_nodes_uninitialized', 'loopwright_node_uninitialized_oldest_seconds'].map(
          async (metric) => (await registry.getSingleMetric(metric)?.get())?.values[0]?.value,
        ),
      );
    assert.deepEqual(await gauges(), [0, 0]);
    cached.push(aNode('joining', [uninitialized()]));
    clock.step(45_000);
    assert.deepEqual(await gauges(), [1, 45]);
    cached.pop();
    assert.deepEqual(await gauges(), [0, 0]);
  });
});
