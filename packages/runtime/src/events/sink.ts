/**
 * Where an {@link EventRecorder} writes: the `events.k8s.io/v1` API through a `KubeClient` (so event
 * writes share the controller's rate limiter and REST metrics), or a fake in unit tests. Event writes
 * wait for a token at `background` priority: a diagnostic never takes a token a reconcile waits for.
 */
import type { KubeClient } from '@loopwright/client';
import type { EventsV1Event, EventsV1EventSeries } from './types.ts';

export interface EventSink {
  /** POST the event into `namespace`; resolves with the stored event. */
  create(namespace: string, event: EventsV1Event): Promise<EventsV1Event>;
  /** JSON-merge-patch the event's `series`; rejects with a NotFound `KubeApiError` if it is gone. */
  patchSeries(namespace: string, name: string, series: EventsV1EventSeries): Promise<EventsV1Event>;
}

export function kubeEventSink(client: KubeClient): EventSink {
  const base = (namespace: string): string =>
    `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`;
  return {
    create: (namespace, event) =>
      client.requestJson<EventsV1Event>('POST', base(namespace), { body: event, priority: 'background' }),
    patchSeries: (namespace, name, series) =>
      client.requestJson<EventsV1Event>('PATCH', `${base(namespace)}/${encodeURIComponent(name)}`, {
        body: { series },
        contentType: 'application/merge-patch+json',
        priority: 'background',
      }),
  };
}
