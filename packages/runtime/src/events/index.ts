export {
  EventRecorder,
  NOTE_MAX_BYTES,
  type EventRecorderOptions,
  type EventRecorderStats,
} from './recorder.ts';
export { kubeEventSink, type EventSink } from './sink.ts';
export { microTime } from './micro-time.ts';
export type { EventInput, EventType, EventsV1Event, EventsV1EventSeries, ObjectReference } from './types.ts';
