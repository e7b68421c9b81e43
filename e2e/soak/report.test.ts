import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { missedTargets, replicaFigures, replicaTable } from './report.ts';
import type { ReplicaSample, Sample } from './sampler.ts';

const MB = 1e6;

/** Samples every 30 s of a `duration` run, each replica's figures from `replica(elapsed)`. */
function run(duration: number, replicas: ((elapsed: number) => ReplicaSample)[]): Sample[] {
  const samples: Sample[] = [];
  for (let elapsed = 30; elapsed <= duration; elapsed += 30)
    samples.push({
      elapsedSeconds: elapsed,
      time: '',
      changesPerSecond: {},
      machineCpuBusy: 0.5,
      replicas: replicas.map((replica) => replica(elapsed)),
    });
  return samples;
}

const replica = (pod: string, figures: Partial<ReplicaSample> = {}): ReplicaSample => ({
  controller: 'at-scheduler',
  pod,
  leader: pod === 'a',
  restarts: 0,
  heapAfterGcBytes: 20 * MB,
  rssBytes: 80 * MB,
  eventLoopLagP99Seconds: 0.012,
  cpuSeconds: 0,
  workqueueDepth: 0,
  ...figures,
});

describe('the soak report', () => {
  test("a replica's heap at each checkpoint is the median of its window: one GC's outlier does not move it", () => {
    // 2 h: the early checkpoint at 30 min over (25 min, 30 min], the end over (115 min, 120 min].
    const [figures] = replicaFigures(
      run(7200, [
        (t) =>
          replica('a', {
            heapAfterGcBytes: (t === 1800 || t === 7200 ? 35 : 20) * MB,
            cpuSeconds: t / 10,
            reconciles: t * 3,
          }),
      ]),
      7200,
    );
    assert.equal(figures?.heapEarly, 20 * MB);
    assert.equal(figures.heapEnd, 20 * MB);
    assert.equal(figures.heapGrowth, 0);
    assert.equal(figures.cpu, 0.1);
    assert.equal(figures.reconcileRate, 3);
    assert.deepEqual(
      missedTargets(replicaFigures(run(7200, [(t) => replica('a', { cpuSeconds: t })]), 7200), 60),
      [],
    );
  });

  test('a heap that grows more than 5 % between the checkpoints misses the target, per replica', () => {
    // Grows 10 % from the early checkpoint to the end; the standby stays flat.
    const growing = (t: number) => replica('a', { heapAfterGcBytes: (t <= 1800 ? 20 : 22) * MB });
    const figures = replicaFigures(run(7200, [growing, (t) => replica('b', { cpuSeconds: t })]), 7200);
    assert.ok(Math.abs((figures[0]?.heapGrowth ?? 0) - 0.1) < 1e-9);
    assert.deepEqual(missedTargets(figures, 60), [
      'at-scheduler a: heap after GC grew +10.0 % (target at most +5.0 %)',
    ]);
  });

  test('the early checkpoint of a short run is a quarter of it, and the table says so', () => {
    // 10 min: the early checkpoint at 2.5 min, over (1.5 min, 2.5 min].
    const samples = run(600, [(t) => replica('a', { heapAfterGcBytes: (t <= 150 ? 20 : 21) * MB })]);
    const figures = replicaFigures(samples, 600);
    assert.equal(figures[0]?.heapEarly, 20 * MB);
    assert.equal(figures[0].heapEnd, 21 * MB);
    const table = replicaTable(figures, 600);
    assert.match(table, /heap after GC @2\.5 min \(MB\) \| @10 min/);
    assert.match(table, /a quarter of it, as 30 min is of the 2 h run/);
    assert.match(table, /\| a \(leader\) +\| 20\.0 +\| 21\.0 +\| \+5\.0 %/);
  });

  test('a restart, a missing heap figure and a change rate under 50 a second each miss a target', () => {
    const restarted = (t: number) => replica('a', { restarts: t > 300 ? 1 : 0, cpuSeconds: t > 300 ? 1 : t });
    // Answers its scrapes, but has had no major GC yet.
    const silent = (t: number): ReplicaSample => ({
      controller: 'at-scheduler',
      pod: 'b',
      leader: false,
      restarts: 0,
      cpuSeconds: t,
    });
    const figures = replicaFigures(run(600, [restarted, silent]), 600);
    assert.equal(figures[0]?.cpu, undefined, 'no CPU mean across a restart: its counter started again');
    assert.equal(figures[1]?.cpu, 1);
    assert.deepEqual(missedTargets(figures, 49.5), [
      '49.5 changes a second, fewer than 50: not the load asked for',
      'at-scheduler a: restarted 1 time(s)',
      'at-scheduler b: heap after GC not known at both checkpoints (no major GC yet, or no answer, in a window)',
    ]);
  });
});
