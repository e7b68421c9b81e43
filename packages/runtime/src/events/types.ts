/** A reference to the object an event is about (`regarding`) or a secondary object (`related`). */
export interface ObjectReference {
  apiVersion: string;
  kind: string;
  /** Empty or absent for cluster-scoped objects (their events go to the `default` namespace). */
  namespace?: string;
  name: string;
  uid?: string;
  /** Recorded on the Event as given, but not part of the aggregation key (see `EventRecorder`). */
  resourceVersion?: string;
  fieldPath?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventInput {
  type: EventType;
  /** Why the action was taken, UpperCamelCase (`ScheduleInvalid`). Required, at most 128 bytes. */
  reason: string;
  /** What was done or failed, UpperCamelCase (`CreatePod`). Required, at most 128 bytes. */
  action: string;
  /** Human-readable detail; truncated to 1024 bytes (the API limit). */
  note?: string;
  related?: ObjectReference;
}

export interface EventsV1EventSeries {
  count: number;
  lastObservedTime: string;
}

/** The `events.k8s.io/v1` Event fields this recorder writes. */
export interface EventsV1Event {
  apiVersion: 'events.k8s.io/v1';
  kind: 'Event';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  eventTime: string;
  series?: EventsV1EventSeries;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: EventType;
  note?: string;
  regarding: ObjectReference;
  related?: ObjectReference;
}
