/**
 * cloud-node's own metric families, on the Manager's registry beside the runtime's and Hetzner's
 * (hcloud-metrics.ts): the Nodes still waiting for initialisation. Documented in the README's _Metrics_.
 */
import type { Clock } from '@loopwright/core';
import { Gauge, type Registry } from 'prom-client';
import { UNINITIALIZED_TAINT } from './names.ts';
import type { Node } from './node.ts';

export interface UninitializedNodes {
  count: number;
  /** Age of the oldest, in seconds; 0 when there is none. */
  oldestSeconds: number;
}

/**
 * The Nodes carrying the uninitialized taint, and how long the oldest has carried it: since the
 * taint's `timeAdded` when set, else since the Node's creation (kubelet registers the Node with the
 * taint, and sets no `timeAdded` on a NoSchedule taint). A time that does not parse, or lies ahead of
 * `nowMs` (clock skew with the API server), counts as age 0.
 */
export function uninitializedNodes(nodes: readonly Node[], nowMs: number): UninitializedNodes {
  let count = 0;
  let oldestSeconds = 0;
  for (const node of nodes) {
    const taint = node.spec?.taints?.find((t) => t.key === UNINITIALIZED_TAINT);
    if (taint === undefined) continue;
    count++;
    const sinceMs = Date.parse(taint.timeAdded ?? node.metadata?.creationTimestamp ?? '');
    if (!Number.isNaN(sinceMs)) oldestSeconds = Math.max(oldestSeconds, (nowMs - sinceMs) / 1000);
  }
  return { count, oldestSeconds };
}

export interface NodeMetricsOptions {
  /** The controllers' Node cache (its lister): only the Nodes their node selector matches. */
  nodes: { list(): Node[] };
  /** Its `wallTime()` is compared with the API server's timestamps. */
  clock: Pick<Clock, 'wallTime'>;
}

/** Registers the two gauges; both are counted from the cache at each scrape. */
export function registerNodeMetrics(registry: Registry, { nodes, clock }: NodeMetricsOptions): void {
  const current = (): UninitializedNodes => uninitializedNodes(nodes.list(), clock.wallTime());
  new Gauge({
    name: 'loopwright_nodes_uninitialized',
    help: `Nodes in the cache carrying the ${UNINITIALIZED_TAINT} taint.`,
    registers: [registry],
    collect() {
      this.set(current().count);
    },
  });
  new Gauge({
    name: 'loopwright_node_uninitialized_oldest_seconds',
    help: 'Seconds the oldest uninitialized Node in the cache has waited; 0 when there is none.',
    registers: [registry],
    collect() {
      this.set(current().oldestSeconds);
    },
  });
}
