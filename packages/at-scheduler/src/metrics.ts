/**
 * at-scheduler's own metric families, on the Manager's registry beside the runtime's: how late Ats
 * start, how they end, and how many are overdue. Documented in the README's _Metrics_.
 */
import type { Lister } from '@loopwright/informer';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { At } from './generated/types.ts';
import { parseSchedule } from './schedule.ts';

/**
 * Bounds of `loopwright_at_start_delay_seconds`, 0.1 s to 10 min. A healthy controller starts an At
 * within tens of milliseconds (the bench's p99 under 200 due Ats a second is about 0.15 s): all of
 * that is the first bucket, since no one asks whether a command ran 20 or 60 ms late. Above it the
 * bounds follow what an operator meets: a failover (about 6 s on the default Lease), a burst beyond
 * the API server's limit (tens of seconds), the 1 minute after which an At counts as overdue, and
 * outages of minutes. Later starts fall in +Inf only.
 */
const START_DELAY_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** How long past its schedule an At without a pod counts in `loopwright_ats_overdue`. */
const OVERDUE_AFTER_MS = 60_000;

/** `loopwright_ats_finished_total{result}`: an At's outcome, in lower case. */
const FINISHED_RESULTS = ['succeeded', 'failed'] as const;

export interface AtMetrics {
  /** The pod of an At was created: `createdMs - scheduleMs` (0 when earlier) is one start delay. */
  podCreated(scheduleMs: number, createdMs: number): void;
  /** This controller wrote the At's DONE status with this outcome. */
  finished(outcome: 'Succeeded' | 'Failed'): void;
  /** Counts the overdue Ats of this cache (one per namespace scope) in `loopwright_ats_overdue`. */
  countOverdueIn(ats: Pick<Lister<At>, 'list'>): void;
}

export interface AtMetricsOptions {
  /** Epoch ms, for the overdue count. Default `Date.now`. */
  now?: () => number;
}

/**
 * Whether `at` is overdue at `nowMs`: its schedule passed more than {@link OVERDUE_AFTER_MS} ago and
 * no pod is recorded for it, while it is neither finished nor being deleted (nothing will run it
 * then). An At whose schedule does not parse never runs and is reported by its InvalidSchedule
 * condition instead, so it is not counted.
 */
export function isOverdue(at: At, nowMs: number): boolean {
  if (at.metadata?.deletionTimestamp !== undefined) return false;
  if (at.status?.phase === 'DONE' || at.status?.podName) return false;
  const schedule = parseSchedule(at.spec.schedule);
  return schedule.ok && nowMs - schedule.epochMs > OVERDUE_AFTER_MS;
}

export function createAtMetrics(registry: Registry, options: AtMetricsOptions = {}): AtMetrics {
  const now = options.now ?? Date.now;
  const caches: Pick<Lister<At>, 'list'>[] = [];
  const startDelay = new Histogram({
    name: 'loopwright_at_start_delay_seconds',
    help: "Seconds from an At's schedule to the creation of its pod.",
    buckets: START_DELAY_BUCKETS,
    registers: [registry],
  });
  const finished = new Counter({
    name: 'loopwright_ats_finished_total',
    help: 'Ats this controller recorded as finished, by result.',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  for (const result of FINISHED_RESULTS) finished.inc({ result }, 0);
  new Gauge({
    name: 'loopwright_ats_overdue',
    help: 'Ats in the cache whose schedule passed more than a minute ago and that have no pod yet.',
    registers: [registry],
    // Counted from the cache at each scrape: nothing to keep current between scrapes.
    collect() {
      const nowMs = now();
      this.set(caches.reduce((sum, ats) => sum + ats.list().filter((at) => isOverdue(at, nowMs)).length, 0));
    },
  });
  return {
    podCreated(scheduleMs, createdMs) {
      startDelay.observe(Math.max(0, createdMs - scheduleMs) / 1000);
    },
    finished(outcome) {
      finished.inc({ result: outcome === 'Succeeded' ? 'succeeded' : 'failed' });
    },
    countOverdueIn(ats) {
      caches.push(ats);
    },
  };
}
