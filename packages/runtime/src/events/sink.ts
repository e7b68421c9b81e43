/**
 * Where an {@link EventRecorder} writes: the `events.k8s.io/v1` Events' handle on a `KubeClient` (so
 * event writes share the controller's rate limiter and REST metrics), or a fake in unit tests. Event
 * writes wait for a token at `background` priority: a diagnostic never takes a token a reconcile waits for.
 */
import type { KubeClient, ResourceType } from '@loopwright/client';
import type { EventsV1Event, EventsV1EventSeries } from './types.ts';

export interface EventSink {
  /** Creates the event in `namespace`; resolves with the stored event. */
  create(namespace: string, event: EventsV1Event): Promise<EventsV1Event>;
  /** JSON-merge-patches the event's `series`; rejects with a NotFound `KubeApiError` if it is gone. */
  patchSeries(namespace: string, name: string, series: EventsV1EventSeries): Promise<EventsV1Event>;
}

const EVENTS: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};

export function kubeEventSink(client: KubeClient): EventSink {
  const events = client.resource<EventsV1Event>(EVENTS);
  return {
    create: (namespace, event) =>
      events.create({ ...event, metadata: { ...event.metadata, namespace } }, { priority: 'background' }),
    patchSeries: (namespace, name, series) =>
      events.patch({ namespace, name }, { merge: { series } }, { priority: 'background' }),
  };
}
