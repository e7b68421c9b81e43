/**
 * How the controller's event loop fared during the window: its delay (how late a 1 ms timer ran, from
 * perf_hooks' histogram) and the garbage collector's pauses, by kind.
 * A start's lateness includes any stall of this process, so a lateness tail shows up here when it is
 * the process's own; `gcInTail` says how much of the slowest starts' lateness was GC.
 */
import {
  PerformanceObserver,
  constants,
  monitorEventLoopDelay,
  type PerformanceEntry,
} from 'node:perf_hooks';

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** A span of time, in epoch ms: a GC pause of this process, or a start from due to create answered. */
export interface Interval {
  startMs: number;
  endMs: number;
}

export interface LoopFigures {
  /** Event-loop delay p50/p99/max and GC pauses by kind (count, total, max). */
  line: string;
  pauses: Interval[];
}

export interface LoopMonitor {
  stop(): LoopFigures;
}

export function monitorLoop(): LoopMonitor {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const pauses = new Map<string, { count: number; totalMs: number; maxMs: number }>();
  const intervals: Interval[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
      const startMs = performance.timeOrigin + entry.startTime;
      intervals.push({ startMs, endMs: startMs + entry.duration });
      const kind = GC_KINDS[entry.detail?.kind ?? -1] ?? 'other';
      const p = pauses.get(kind) ?? { count: 0, totalMs: 0, maxMs: 0 };
      p.count++;
      p.totalMs += entry.duration;
      p.maxMs = Math.max(p.maxMs, entry.duration);
      pauses.set(kind, p);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      delay.disable();
      observer.disconnect();
      const ms = (ns: number): string => (ns / 1e6).toFixed(0);
      const gc = [...pauses]
        .map(([kind, p]) => `${kind} ${p.count} (${p.totalMs.toFixed(0)} ms, max ${p.maxMs.toFixed(0)} ms)`)
        .join(', ');
      return {
        line:
          `event loop delay p50 ${ms(delay.percentile(50))} p99 ${ms(delay.percentile(99))} max ${ms(delay.max)} ms; ` +
          `GC pauses: ${gc || 'none'}`,
        pauses: intervals,
      };
    },
  };
}

/**
 * Of the slowest 1 % of starts (`spans`: due -> create answered), how many a GC pause of this process
 * overlapped, and the share of their summed lateness spent in GC pauses.
 */
export function gcInTail(spans: readonly Interval[], pauses: readonly Interval[]): string {
  const lateness = (span: Interval): number => span.endMs - span.startMs;
  const sorted = [...spans].sort((a, b) => lateness(b) - lateness(a));
  const tail = sorted.slice(0, Math.max(1, Math.ceil(sorted.length / 100)));
  let inGc = 0;
  let total = 0;
  let touched = 0;
  for (const span of tail) {
    const overlap = pauses.reduce(
      (sum, p) => sum + Math.max(0, Math.min(p.endMs, span.endMs) - Math.max(p.startMs, span.startMs)),
      0,
    );
    inGc += overlap;
    total += lateness(span);
    if (overlap > 0) touched++;
  }
  return (
    `slowest 1 % of starts (${tail.length}): ${touched} overlapped a GC pause, ` +
    `${total === 0 ? 0 : ((100 * inGc) / total).toFixed(1)} % of their lateness was GC`
  );
}
