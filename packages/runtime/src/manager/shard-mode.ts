import { resourceName, type ListOptions, type ResourceType } from '@loopwright/client';
import { resourceTypeOf, type ListWatchScope } from '@loopwright/informer';
import { RING_LABEL } from '../sharding/member-lease.ts';
import { BUCKETS, shardSelector, type ShardField } from '../sharding/space.ts';

/**
 * How a sharded Manager keeps its caches (issue 39, part 3), decided once per run: `server-side`, each
 * replica's sharded informers list and watch only its buckets with a `shardSelector`; `in-replica`,
 * every replica caches everything and its controllers filter by the same hash. `reason` says why, for
 * the one log line that tells which.
 */
export type ShardMode = { kind: 'server-side'; reason: string } | { kind: 'in-replica'; reason: string };

const ALL_BUCKETS = Array.from({ length: BUCKETS }, (_, bucket) => bucket);

/** The member Leases of `ring` in `namespace`: the gate's probe (see {@link detectShardMode}). */
export function memberLeaseScope(namespace: string, ring: string): ListWatchScope {
  return {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    namespace,
    labelSelector: `${RING_LABEL}=${ring}`,
  };
}

/** What the probe needs of a `KubeClient`: a list of a resource. */
export interface ProbeClient {
  resource(type: ResourceType): { list(options: ListOptions): Promise<{ shardSelector?: string }> };
}

/** A scope the Manager would cache by shard, and its field. */
interface ShardProbe {
  scope: ListWatchScope;
  field: ShardField;
}

/**
 * Whether the API server selects by shard, asked before any informer starts:
 * 1. the gate: one `limit=1` LIST of `gate` (the ring's member Leases, a built-in kind every sharded
 *    replica may list) selected by the whole hash space. An answer that echoes the selector
 *    (`metadata.shardInfo`) shows the ShardedListAndWatch gate is on; one without it shows the API server
 *    ignores shard selectors (the gate is off, the 1.36 default);
 * 2. each scope the Manager would cache by shard, the same way, so that one it may not list, or that is
 *    not served (e.g. a CRD not installed yet), is found now. Its answer need not echo the selector:
 *    kube-apiserver 1.36.3 filters custom resources by it but echoes it only for built-in kinds (an
 *    unstructured list has no shardInfo to set), so the gate's echo is what tells.
 *
 * One mode for the whole Manager: any doubt (the gate off, a failed probe) makes it `in-replica`, which
 * is always correct, only costlier in memory. The controllers filter by the same hash in both modes, so
 * a scope that the server would not filter after all costs memory, never a wrong owner. No scope at all
 * (every informer cached whole) is `in-replica` too: there is nothing to select.
 */
export async function detectShardMode(
  client: ProbeClient,
  { gate, probes }: { gate: ListWatchScope; probes: readonly ShardProbe[] },
  signal: AbortSignal,
): Promise<ShardMode> {
  if (probes.length === 0) {
    return {
      kind: 'in-replica',
      reason: 'no informer can be selected by shard (each is needed whole by some controller)',
    };
  }
  const gateAnswer = await probe(client, { scope: gate, field: 'object.metadata.uid' }, signal);
  if (gateAnswer instanceof Error) return failed(gate, gateAnswer);
  if (gateAnswer === 'ignored') {
    return {
      kind: 'in-replica',
      reason: `the API server ignores shardSelector (feature gate ShardedListAndWatch off): no shardInfo in the list of ${resourceName(gate)}`,
    };
  }
  for (const shardProbe of probes) {
    const answer = await probe(client, shardProbe, signal);
    if (answer instanceof Error) return failed(shardProbe.scope, answer);
  }
  return {
    kind: 'server-side',
    reason: `the API server applies shardSelector (shardInfo in the list of ${resourceName(gate)}); sharded: ${probes.map(({ scope }) => scope.plural).join(', ')}`,
  };
}

/** One `limit=1` list of `scope` selected by the whole space: whether the answer echoed the selector. */
async function probe(
  client: ProbeClient,
  { scope, field }: ShardProbe,
  signal: AbortSignal,
): Promise<'echoed' | 'ignored' | Error> {
  const { namespace, labelSelector, fieldSelector } = scope;
  try {
    const page = await client.resource(resourceTypeOf(scope)).list({
      ...(namespace === undefined ? {} : { namespace }),
      ...(labelSelector === undefined ? {} : { labelSelector }),
      ...(fieldSelector === undefined ? {} : { fieldSelector }),
      limit: 1,
      shardSelector: shardSelector(field, ALL_BUCKETS),
      signal,
    });
    return page.shardSelector === undefined ? 'ignored' : 'echoed';
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

function failed(scope: ListWatchScope, error: Error): ShardMode {
  return {
    kind: 'in-replica',
    reason: `probing shardSelector on ${resourceName(scope)} failed: ${error.message}`,
  };
}
