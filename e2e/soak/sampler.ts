/**
 * One sample of the soak every 30 s, appended to a JSON lines file (one {@link Sample} a line) for a
 * plot: each replica's memory, event-loop lag, CPU and queue depth from its /metrics, which replica
 * leads, the change rate the bench saw, and how busy the machine was, so that a figure can be told
 * from a machine that could not keep up.
 */
import { appendFile, readFile } from 'node:fs/promises';
import type { ChaosEnvironment } from '../chaos/environment.ts';
import { leaseOf, replicasOf, scrape } from '../chaos/replicas.ts';
import type { ChangeCounter } from './change-counter.ts';

export interface ReplicaSample {
  controller: string;
  pod: string;
  leader: boolean;
  restarts: number;
  /** Absent while the replica does not answer; the heap also until its first major GC. */
  heapAfterGcBytes?: number;
  rssBytes?: number;
  /** The p99 of the event-loop lag since the previous scrape (only the bench scrapes the replicas). */
  eventLoopLagP99Seconds?: number;
  cpuSeconds?: number;
  /** `controller_runtime_reconcile_total`, every controller and result: the churn reaching it. */
  reconciles?: number;
  workqueueDepth?: number;
}

export interface Sample {
  /** Seconds since the load started. */
  elapsedSeconds: number;
  time: string;
  /** Changes the bench's watches saw since the previous sample, per second, per kind and in total. */
  changesPerSecond: Record<string, number>;
  /** The machine's CPUs' busy share since the previous sample, 0..1 (everything on it, not only the soak). */
  machineCpuBusy: number;
  replicas: ReplicaSample[];
}

/** /proc/stat's first line: every CPU's time, busy and in all. */
async function machineCpu(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((sum, value) => sum + value, 0);
  // idle and iowait are fields 4 and 5.
  return { busy: total - (ticks[3] ?? 0) - (ticks[4] ?? 0), total };
}

export class Sampler {
  readonly #env: ChaosEnvironment;
  readonly #counter: ChangeCounter;
  readonly #path: string;
  #previous: { at: number; counts: Record<string, number>; cpu: { busy: number; total: number } } | undefined;
  readonly samples: Sample[] = [];

  constructor(env: ChaosEnvironment, counter: ChangeCounter, path: string) {
    this.#env = env;
    this.#counter = counter;
    this.#path = path;
  }

  /** Where the next sample's rates start from: call once, when the load starts. */
  async begin(): Promise<void> {
    this.#previous = { at: performance.now(), counts: this.#counter.counts(), cpu: await machineCpu() };
  }

  async sample(elapsedSeconds: number): Promise<Sample> {
    const now = { at: performance.now(), counts: this.#counter.counts(), cpu: await machineCpu() };
    const previous = this.#previous ?? now;
    this.#previous = now;
    const seconds = Math.max(0.001, (now.at - previous.at) / 1000);
    const changesPerSecond: Record<string, number> = {};
    let total = 0;
    for (const [kind, count] of Object.entries(now.counts)) {
      const changes = count - (previous.counts[kind] ?? 0);
      changesPerSecond[kind] = changes / seconds;
      total += changes;
    }
    changesPerSecond.total = total / seconds;
    const cpuTicks = now.cpu.total - previous.cpu.total;
    const sample: Sample = {
      elapsedSeconds,
      time: new Date().toISOString(),
      changesPerSecond,
      machineCpuBusy: cpuTicks > 0 ? (now.cpu.busy - previous.cpu.busy) / cpuTicks : 0,
      replicas: await this.#replicas(),
    };
    this.samples.push(sample);
    await appendFile(this.#path, `${JSON.stringify(sample)}\n`);
    return sample;
  }

  async #replicas(): Promise<ReplicaSample[]> {
    const { admin, controllers } = this.#env;
    const perController = await Promise.all(
      controllers.map(async (controller) => {
        const [lease, replicas] = await Promise.all([
          leaseOf(admin, controller).catch(() => undefined),
          replicasOf(admin, controller),
        ]);
        return Promise.all(
          replicas.map(async (replica): Promise<ReplicaSample> => {
            const metrics = await scrape(replica);
            const base = {
              controller: controller.name,
              pod: replica.name,
              leader: lease?.holder === replica.name,
              restarts: replica.restarts,
            };
            if (!metrics) return base;
            const heap = metrics.sum('nodejs_heap_used_after_gc_bytes');
            return {
              ...base,
              ...(heap > 0 ? { heapAfterGcBytes: heap } : {}),
              rssBytes: metrics.sum('process_resident_memory_bytes'),
              eventLoopLagP99Seconds: metrics.sum('nodejs_eventloop_lag_p99_seconds'),
              cpuSeconds: metrics.sum('process_cpu_seconds_total'),
              reconciles: metrics.sum('controller_runtime_reconcile_total'),
              workqueueDepth: metrics.sum('workqueue_depth'),
            };
          }),
        );
      }),
    );
    return perController.flat();
  }
}
