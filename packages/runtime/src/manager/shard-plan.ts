import type { ShardField } from '../sharding/space.ts';

/** What one reader (a controller's `for`, `owns` or `watches`) needs of a shared informer. */
export interface ShardNeed<I> {
  informer: I;
  /** Cache only the objects of the held buckets, hashed on this field; `undefined`: cache it whole. */
  field: ShardField | undefined;
}

/**
 * The informers a sharded Manager caches by shard when the API server selects server-side (issue 39,
 * part 3), each with its field: those that every reader wants sharded, all on the same field. An
 * informer is shared by scope, so one reader that needs it whole (an owned resource of a controller
 * sharded by uid) or two that hash different fields keep it whole: it then holds everything, and each
 * controller filters in the replica as without server-side selection.
 */
export function shardedInformers<I>(needs: readonly ShardNeed<I>[]): Map<I, ShardField> {
  const fields = new Map<I, ShardField | undefined>();
  for (const { informer, field } of needs) {
    const known = fields.has(informer);
    fields.set(informer, !known || fields.get(informer) === field ? field : undefined);
  }
  const sharded = new Map<I, ShardField>();
  for (const [informer, field] of fields) if (field !== undefined) sharded.set(informer, field);
  return sharded;
}
