/**
 * How many buckets each member of a ring holds, as its member Lease says: the runtime's holdings
 * annotation (`sharding.loopwright.dev/buckets`, sorted runs such as `0-84,200`) on the Leases labelled
 * `sharding.loopwright.dev/ring=<ring>`. Read from the API, as another replica reads them, so a bench can
 * tell that the ring has settled: every one of the 256 buckets held, by exactly one member.
 */
import type { KubeObject, ResourceType } from '@loopwright/client';
import type { KubeClient } from '@loopwright/runtime';

const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
};
const RING_LABEL = 'sharding.loopwright.dev/ring';
const HOLDINGS_ANNOTATION = 'sharding.loopwright.dev/buckets';
const BUCKETS = 256;

/** Lease holder identity -> buckets; a bucket held twice is counted twice (the caller sees the sum). */
export async function memberBuckets(
  admin: KubeClient,
  namespace: string,
  ring: string,
): Promise<Map<string, number[]>> {
  const { items } = await admin
    .resource<KubeObject & { spec?: { holderIdentity?: string } }>(LEASES)
    .list({ namespace, labelSelector: `${RING_LABEL}=${ring}` });
  const held = new Map<string, number[]>();
  for (const lease of items) {
    const text = lease.metadata?.annotations?.[HOLDINGS_ANNOTATION] ?? '';
    const buckets = text === '' ? [] : text.split(',').flatMap(runBuckets);
    held.set(lease.spec?.holderIdentity ?? lease.metadata?.name ?? '?', buckets);
  }
  return held;
}

/** `5` or `5-9` -> its buckets. */
function runBuckets(run: string): number[] {
  const [first = Number.NaN, last = first] = run.split('-').map(Number);
  return Array.from({ length: last - first + 1 }, (_, i) => first + i);
}

/** Every bucket held, none twice, by `members` members: the ring has settled. */
export function settledRing(held: ReadonlyMap<string, readonly number[]>, members: number): boolean {
  const all = [...held.values()].flat();
  return held.size === members && all.length === BUCKETS && new Set(all).size === BUCKETS;
}
