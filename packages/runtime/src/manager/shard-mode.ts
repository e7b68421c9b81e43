import { resourceName, type ListOptions, type ResourceType } from '@loopwright/client';
import { resourceTypeOf, type ListWatchScope } from '@loopwright/informer';
import { BUCKETS, shardSelector, type ShardField } from '../sharding/space.ts';

/**
 * How a sharded Manager keeps its caches (issue 39, part 3), decided once per run: `server-side`, each
 * replica's sharded informers list and watch only its buckets with a `shardSelector`; `in-replica`,
 * every replica caches everything and its controllers filter by the same hash. `reason` says why, for
 * the one log line that tells which.
 */
export type ShardMode = { kind: 'server-side'; reason: string } | { kind: 'in-replica'; reason: string };

const ALL_BUCKETS = Array.from({ length: BUCKETS }, (_, bucket) => bucket);

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
 * Asks the API server, for each scope, for one object (`limit=1`) selected by the whole hash space: an
 * answer that echoes the selector (`metadata.shardInfo`) shows it selects server-side; one without it
 * (the ShardedListAndWatch gate is off, the 1.36 default) shows it ignores the selector. One mode for
 * the whole Manager, so any scope that does not show it, or whose probe fails (e.g. a CRD not installed
 * yet), makes it `in-replica`: always correct, only costlier in memory. No scope at all (every informer
 * cached whole) is `in-replica` too: there is nothing to select.
 */
export async function detectShardMode(
  client: ProbeClient,
  probes: readonly ShardProbe[],
  signal: AbortSignal,
): Promise<ShardMode> {
  if (probes.length === 0) {
    return {
      kind: 'in-replica',
      reason: 'no informer can be selected by shard (each is needed whole by some controller)',
    };
  }
  for (const { scope, field } of probes) {
    const { namespace, labelSelector, fieldSelector } = scope;
    const resource = resourceName(scope);
    try {
      const page = await client.resource(resourceTypeOf(scope)).list({
        ...(namespace === undefined ? {} : { namespace }),
        ...(labelSelector === undefined ? {} : { labelSelector }),
        ...(fieldSelector === undefined ? {} : { fieldSelector }),
        limit: 1,
        shardSelector: shardSelector(field, ALL_BUCKETS),
        signal,
      });
      if (page.shardSelector === undefined) {
        return {
          kind: 'in-replica',
          reason: `the API server ignores shardSelector (feature gate ShardedListAndWatch off): no shardInfo in the list of ${resource}`,
        };
      }
    } catch (error) {
      return {
        kind: 'in-replica',
        reason: `probing shardSelector on ${resource} failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }
  return {
    kind: 'server-side',
    reason: `the API server applies shardSelector to ${probes.map(({ scope }) => scope.plural).join(', ')}`,
  };
}
