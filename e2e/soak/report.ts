/**
 * The soak's figures from its samples, and its verdict. Per replica: the used heap after the latest
 * major GC and the RSS at the early checkpoint (30 min of the 2 h run: a quarter of any run) and at the
 * end, each the median of the samples in the window that ends there (a GC's figure depends on what was
 * in flight when it ran; one sample would be noise), and the heap's growth between them; RSS's max; the
 * event-loop lag p99's median and max; CPU used; the deepest workqueue; restarts.
 * The targets: heap growth at most 5 % on every replica, at least 50 changes a second measured, no
 * replica restarted; the invariants' outcome is added by the caller.
 */
import type { ReplicaSample, Sample } from './sampler.ts';

const TARGETS = { maxHeapGrowth: 0.05, minChangesPerSecond: 50 } as const;

/** The early checkpoint: 30 min of a 2 h run, a quarter of any other. */
export function earlyCheckpointSeconds(durationSeconds: number): number {
  return durationSeconds / 4;
}

/** The window a checkpoint's figure is the median of: 5 min of a 2 h run, at least two samples. */
function checkpointWindowSeconds(durationSeconds: number): number {
  return Math.max(60, durationSeconds / 24);
}

export interface ReplicaFigures {
  controller: string;
  pod: string;
  /** Its role in the last sample. */
  leader: boolean;
  heapEarly?: number;
  heapEnd?: number;
  /** heapEnd / heapEarly - 1. */
  heapGrowth?: number;
  rssEarly?: number;
  rssEnd?: number;
  rssMax?: number;
  lagP99Median?: number;
  lagP99Max?: number;
  /** Mean CPU use (1 = one CPU) between its first and last sample. */
  cpu?: number;
  /** Mean reconciles a second over the same span. */
  reconcileRate?: number;
  workqueueDepthMax?: number;
  restarts: number;
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const defined = (values: readonly (number | undefined)[]): number[] =>
  values.filter((value): value is number => value !== undefined);

const max = (values: readonly number[]): number | undefined =>
  values.length === 0 ? undefined : Math.max(...values);

export function replicaFigures(samples: readonly Sample[], durationSeconds: number): ReplicaFigures[] {
  const early = earlyCheckpointSeconds(durationSeconds);
  const window = checkpointWindowSeconds(durationSeconds);
  const series = new Map<string, { elapsed: number; replica: ReplicaSample }[]>();
  for (const sample of samples)
    for (const replica of sample.replicas) {
      const key = `${replica.controller}/${replica.pod}`;
      series.set(key, [...(series.get(key) ?? []), { elapsed: sample.elapsedSeconds, replica }]);
    }
  return [...series.values()].map((points) => {
    const first = points[0]?.replica;
    const last = points.at(-1)?.replica;
    if (!first || !last) throw new Error('a replica without samples');
    const at = (end: number, value: (replica: ReplicaSample) => number | undefined) =>
      median(
        defined(
          points.filter((p) => p.elapsed > end - window && p.elapsed <= end).map((p) => value(p.replica)),
        ),
      );
    const all = (value: (replica: ReplicaSample) => number | undefined) =>
      defined(points.map((p) => value(p.replica)));
    const heapEarly = at(early, (r) => r.heapAfterGcBytes);
    const heapEnd = at(durationSeconds, (r) => r.heapAfterGcBytes);
    const restarts = last.restarts - first.restarts;
    // A counter's mean rate between its first and last sample; none across a restart, which resets it.
    const rate = (value: (replica: ReplicaSample) => number | undefined) => {
      const counted = points.filter((p) => value(p.replica) !== undefined);
      const [from, to] = [counted[0], counted.at(-1)];
      if (!from || !to || to.elapsed <= from.elapsed || restarts > 0) return undefined;
      return ((value(to.replica) ?? 0) - (value(from.replica) ?? 0)) / (to.elapsed - from.elapsed);
    };
    return {
      controller: first.controller,
      pod: first.pod,
      leader: last.leader,
      ...(heapEarly === undefined ? {} : { heapEarly }),
      ...(heapEnd === undefined ? {} : { heapEnd }),
      ...(heapEarly && heapEnd !== undefined ? { heapGrowth: heapEnd / heapEarly - 1 } : {}),
      ...optional(
        'rssEarly',
        at(early, (r) => r.rssBytes),
      ),
      ...optional(
        'rssEnd',
        at(durationSeconds, (r) => r.rssBytes),
      ),
      ...optional('rssMax', max(all((r) => r.rssBytes))),
      ...optional('lagP99Median', median(all((r) => r.eventLoopLagP99Seconds))),
      ...optional('lagP99Max', max(all((r) => r.eventLoopLagP99Seconds))),
      ...optional(
        'cpu',
        rate((r) => r.cpuSeconds),
      ),
      ...optional(
        'reconcileRate',
        rate((r) => r.reconciles),
      ),
      ...optional('workqueueDepthMax', max(all((r) => r.workqueueDepth))),
      restarts,
    };
  });
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/** What missed a target, one line each; empty when every target is met. */
export function missedTargets(replicas: readonly ReplicaFigures[], changesPerSecond: number): string[] {
  const missed: string[] = [];
  if (changesPerSecond < TARGETS.minChangesPerSecond)
    missed.push(
      `${changesPerSecond.toFixed(1)} changes a second, fewer than ${TARGETS.minChangesPerSecond}: not the load asked for`,
    );
  for (const replica of replicas) {
    const name = `${replica.controller} ${replica.pod}`;
    if (replica.heapGrowth === undefined)
      missed.push(
        `${name}: heap after GC not known at both checkpoints (no major GC yet, or no answer, in a window)`,
      );
    else if (replica.heapGrowth > TARGETS.maxHeapGrowth)
      missed.push(
        `${name}: heap after GC grew ${percent(replica.heapGrowth)} (target at most ${percent(TARGETS.maxHeapGrowth)})`,
      );
    if (replica.restarts > 0) missed.push(`${name}: restarted ${replica.restarts} time(s)`);
  }
  return missed;
}

const percent = (ratio: number): string => `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)} %`;
const mb = (bytes: number | undefined): string => (bytes === undefined ? '-' : (bytes / 1e6).toFixed(1));
const ms = (seconds: number | undefined): string =>
  seconds === undefined ? '-' : (seconds * 1000).toFixed(1);
const minutes = (seconds: number): string => `${+(seconds / 60).toFixed(1)} min`;

/** The per-replica table; its header names the checkpoints' times (scaled for a short run). */
export function replicaTable(replicas: readonly ReplicaFigures[], durationSeconds: number): string {
  const early = minutes(earlyCheckpointSeconds(durationSeconds));
  const end = minutes(durationSeconds);
  const header = [
    'controller',
    'replica',
    `heap after GC @${early} (MB)`,
    `@${end}`,
    'growth',
    `RSS @${early} (MB)`,
    `@${end}`,
    'max',
    'lag p99 median (ms)',
    'max',
    'CPU',
    'reconciles/s',
    'queue depth max',
    'restarts',
  ];
  const rows = replicas.map((r) => [
    r.controller,
    `${r.pod} (${r.leader ? 'leader' : 'standby'})`,
    mb(r.heapEarly),
    mb(r.heapEnd),
    r.heapGrowth === undefined ? '-' : percent(r.heapGrowth),
    mb(r.rssEarly),
    mb(r.rssEnd),
    mb(r.rssMax),
    ms(r.lagP99Median),
    ms(r.lagP99Max),
    r.cpu === undefined ? '-' : `${(r.cpu * 100).toFixed(1)} %`,
    r.reconcileRate === undefined ? '-' : r.reconcileRate.toFixed(1),
    r.workqueueDepthMax === undefined ? '-' : String(r.workqueueDepthMax),
    String(r.restarts),
  ]);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`;
  const notes = [
    // Node's event-loop delay histogram counts prom-client's 10 ms sampling interval in every figure.
    '(event-loop lag as the metric reports it: the 10 ms sampling interval included, an idle loop reads 10-15 ms)',
    ...(durationSeconds === 7200
      ? []
      : [`(a ${end} run: the early checkpoint is a quarter of it, as 30 min is of the 2 h run)`]),
  ];
  return [line(header), rule, ...rows.map(line), ...notes].join('\n');
}
