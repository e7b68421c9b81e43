import type { KubeObject } from '@loopwright/client';

/**
 * A `transform` that drops `metadata.managedFields`, typically the largest part of a small object's
 * metadata and useless to a controller (controller-runtime offers the same, `TransformStripManagedFields`).
 * The Manager of `@loopwright/runtime` applies it to every informer by default.
 *
 * `metadata` is replaced by a copy without the field rather than `delete`d from: `delete` turns the
 * object into a dictionary-mode one (a hash table) in V8, which takes back most of what dropping the
 * field saves (measured on the bench's ConfigMaps, decoded objects alone: 1160 B each unstripped,
 * 830 B after `delete`, 450 B with the copy).
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata === undefined || !('managedFields' in obj.metadata)) return obj;
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the copy without it is the point
  const { managedFields, ...metadata } = obj.metadata;
  obj.metadata = metadata;
  return obj;
}
