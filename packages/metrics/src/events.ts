import { Counter, type Registry } from 'prom-client';

/** Why an Event was not recorded (see the runtime's EventRecorder). */
export const EVENT_DROP_CAUSES = ['spam-filter', 'queue-full', 'closed', 'invalid'] as const;
export type EventDropCause = (typeof EVENT_DROP_CAUSES)[number];

export interface EventMetrics {
  /** Counts one Event not recorded, by cause: `loopwright_events_dropped_total{cause}`. */
  dropped(cause: EventDropCause): void;
}

/**
 * Events are best effort: a recorder drops them rather than delay a reconcile (full write queue) or
 * spam the API (per-object filter). The counter makes the loss visible; every cause is exported at 0
 * from the start, so `rate()` and alerts work before the first drop.
 */
export function createEventMetrics(registry: Registry): EventMetrics {
  const dropped = new Counter({
    name: 'loopwright_events_dropped_total',
    help: 'Events not recorded, by cause: spam-filter (per-object limit), queue-full (writes waiting behind reconciles), closed (after shutdown), invalid.',
    labelNames: ['cause'] as const,
    registers: [registry],
  });
  for (const cause of EVENT_DROP_CAUSES) dropped.inc({ cause }, 0);
  return {
    dropped(cause) {
      dropped.inc({ cause });
    },
  };
}
