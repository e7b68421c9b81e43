/**
 * How the controller's event loop fared during the window: its delay (how late a 1 ms timer ran, from
 * perf_hooks' histogram) and the garbage collector's pauses, by kind.
 * A start's lateness includes any stall of this process, so a lateness tail shows up here when it is
 * the process's own.
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

export interface LoopMonitor {
  /** Stops monitoring; one line: event-loop delay p50/p99/max and GC pauses by kind (count, total, max). */
  stop(): string;
}

export function monitorLoop(): LoopMonitor {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const pauses = new Map<string, { count: number; totalMs: number; maxMs: number }>();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
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
      return (
        `event loop delay p50 ${ms(delay.percentile(50))} p99 ${ms(delay.percentile(99))} max ${ms(delay.max)} ms; ` +
        `GC pauses: ${gc || 'none'}`
      );
    },
  };
}
