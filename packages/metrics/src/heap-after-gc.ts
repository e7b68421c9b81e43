import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { Gauge, type Registry } from 'prom-client';

export interface HeapAfterGcMetric {
  /** Stops observing GCs; the gauge keeps its last value. Idempotent. */
  close(): void;
}

/**
 * `nodejs_heap_used_after_gc_bytes`: V8's used heap size read right after the latest major
 * (mark-compact) GC. Used heap right after a full collection is what the process really retains, so it
 * stays flat in a healthy process and climbs in a leaking one, where `nodejs_heap_size_used_bytes`
 * saw-tooths with garbage not yet collected. Minor (scavenge) GCs are left out: they leave the old
 * generation's garbage in place, so what follows them says little about retention.
 *
 * The observer's callback runs in the event-loop turn after the GC (Node queues GC entries), so what
 * it reads includes what was allocated in between: a few KB in practice, against the MBs a leak
 * shows. An observer does not keep the process alive.
 */
export function createHeapAfterGcMetric(registry: Registry): HeapAfterGcMetric {
  const gauge = new Gauge({
    name: 'nodejs_heap_used_after_gc_bytes',
    help: 'V8 used heap size in bytes right after the latest major (mark-compact) GC; 0 until the first.',
    registers: [registry],
  });
  gauge.set(0);
  const observer = new PerformanceObserver((list) => {
    const majorGcEnded = list
      .getEntries()
      .some((entry) => gcKind(entry) === constants.NODE_PERFORMANCE_GC_MAJOR);
    if (majorGcEnded) gauge.set(getHeapStatistics().used_heap_size);
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    close() {
      observer.disconnect();
    },
  };
}

/** A `gc` entry's kind (Node puts it in `detail`, which the entry's type does not declare). */
function gcKind(entry: PerformanceEntry): number | undefined {
  return (entry as { detail?: { kind?: number } }).detail?.kind;
}
