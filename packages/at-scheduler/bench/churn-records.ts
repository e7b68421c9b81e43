/**
 * What the API server holds about each At at the end of the churn run, read with the admin client: its
 * schedule, its own record of its start (`status.startTime`, the claim's time), whether the pod it names
 * exists and is controlled by it, and its `Started` Events (events.k8s.io/v1, the recorder's).
 */
import type { KubeClient, KubeObject, ResourceType } from '@loopwright/runtime';
import { AT_RESOURCE, POD_RESOURCE, podNameFor, type At, type Pod } from '../src/index.ts';
import type { AtRecord } from './churn-check.ts';

const EVENTS: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};

type Event = KubeObject & {
  reason?: string;
  regarding?: { uid?: string };
  series?: { count?: number };
};

/** The Ats of `namespace` and how many have a start recorded. */
export async function listAts(admin: KubeClient, namespace: string): Promise<At[]> {
  return (await admin.resource<At>(AT_RESOURCE).list({ namespace })).items;
}

export async function atRecords(admin: KubeClient, namespace: string): Promise<AtRecord[]> {
  const [ats, pods, events] = await Promise.all([
    listAts(admin, namespace),
    admin.resource<Pod>(POD_RESOURCE).list({ namespace }),
    admin.resource<Event>(EVENTS).list({ namespace }),
  ]);
  const podOwner = new Map<string, string | undefined>();
  for (const pod of pods.items)
    podOwner.set(pod.metadata?.name ?? '', pod.metadata?.ownerReferences?.find((ref) => ref.controller)?.uid);
  const started = new Map<string, number>();
  for (const event of events.items) {
    const uid = event.regarding?.uid;
    if (event.reason !== 'Started' || uid === undefined) continue;
    started.set(uid, (started.get(uid) ?? 0) + (event.series?.count ?? 1));
  }
  return ats.map((at) => {
    const name = at.metadata?.name ?? '';
    const uid = at.metadata?.uid ?? '';
    const startTime = at.status?.startTime;
    const podName = at.status?.podName ?? podNameFor(name);
    return {
      key: `${namespace}/${name}`,
      scheduleMs: Date.parse(at.spec.schedule),
      startMs: typeof startTime === 'string' ? Date.parse(startTime) : undefined,
      ownPod: podOwner.get(podName) === uid,
      startedEvents: started.get(uid) ?? 0,
    };
  });
}
