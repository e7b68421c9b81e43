import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { At, AtStatus } from './generated/types.ts';
import { createAtMetrics, isOverdue } from './metrics.ts';
import { valueOf } from './metrics.test-support.ts';

const SCHEDULE = '2030-01-01T00:00:00Z';
const SCHEDULE_MS = Date.parse(SCHEDULE);
const MINUTE = 60_000;

function anAt(status?: AtStatus, metadata: At['metadata'] = {}, schedule = SCHEDULE): At {
  return {
    apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
    kind: 'At',
    metadata: { name: 'nightly', namespace: 'team', ...metadata },
    spec: { schedule, command: 'true' },
    ...(status ? { status } : {}),
  };
}

describe('isOverdue', () => {
  const late = SCHEDULE_MS + MINUTE + 1;

  it('an At without a pod more than a minute after its schedule is overdue', () => {
    assert.equal(isOverdue(anAt(), late), true);
    assert.equal(isOverdue(anAt({ phase: 'PENDING' }), late), true, 'a refused create or a taken name');
  });

  it('not within the minute (exactly a minute is not more than one)', () => {
    assert.equal(isOverdue(anAt(), SCHEDULE_MS + MINUTE), false);
    assert.equal(isOverdue(anAt(), SCHEDULE_MS - MINUTE), false);
  });

  it('not once a pod is recorded, nor when finished', () => {
    assert.equal(isOverdue(anAt({ phase: 'RUNNING', podName: 'nightly-pod' }), late), false);
    assert.equal(isOverdue(anAt({ phase: 'DONE', outcome: 'Failed' }), late), false);
  });

  it('not while it is being deleted, nor with a schedule that does not parse', () => {
    assert.equal(isOverdue(anAt(undefined, { deletionTimestamp: SCHEDULE }), late), false);
    assert.equal(isOverdue(anAt(undefined, {}, 'tomorrow'), late), false);
  });
});

describe('createAtMetrics', () => {
  it('observes start delays in seconds, an early create as 0', async () => {
    const registry = new Registry();
    const metrics = createAtMetrics(registry);
    metrics.podCreated(SCHEDULE_MS, SCHEDULE_MS + 2_500);
    metrics.podCreated(SCHEDULE_MS, SCHEDULE_MS - 1_000);
    assert.equal(await valueOf(registry, 'loopwright_at_start_delay_seconds_count'), 2);
    assert.equal(await valueOf(registry, 'loopwright_at_start_delay_seconds_sum'), 2.5);
    assert.equal(await valueOf(registry, 'loopwright_at_start_delay_seconds_bucket', { le: '0.1' }), 1);
    assert.equal(await valueOf(registry, 'loopwright_at_start_delay_seconds_bucket', { le: '2.5' }), 2);
    assert.equal(await valueOf(registry, 'loopwright_at_start_delay_seconds_bucket', { le: '600' }), 2);
  });

  it('counts finished Ats by result, both created at 0', async () => {
    const registry = new Registry();
    const metrics = createAtMetrics(registry);
    const finished = (result: string) => valueOf(registry, 'loopwright_ats_finished_total', { result });
    assert.deepEqual([await finished('succeeded'), await finished('failed')], [0, 0]);
    metrics.finished('Failed');
    metrics.finished('Succeeded');
    metrics.finished('Failed');
    assert.deepEqual([await finished('succeeded'), await finished('failed')], [1, 2]);
  });

  it('counts the overdue Ats of every cache at each scrape, as of that moment', async () => {
    const registry = new Registry();
    let now = SCHEDULE_MS;
    const metrics = createAtMetrics(registry, { now: () => now });
    const first = [anAt(), anAt({ phase: 'DONE' })];
    const second: At[] = [];
    metrics.countOverdueIn({ list: () => first });
    metrics.countOverdueIn({ list: () => second });
    assert.equal(await valueOf(registry, 'loopwright_ats_overdue'), 0);
    now = SCHEDULE_MS + 2 * MINUTE;
    assert.equal(await valueOf(registry, 'loopwright_ats_overdue'), 1);
    second.push(anAt(), anAt({ phase: 'RUNNING', podName: 'nightly-pod' }));
    assert.equal(await valueOf(registry, 'loopwright_ats_overdue'), 2);
  });
});
