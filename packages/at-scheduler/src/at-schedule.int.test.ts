/**
 * The At's schedule with the in-process controller on a real control plane: what the API server admits,
 * waiting for a future schedule (and a changed one) without polling, and a stored schedule that does not
 * parse.
 */
import { KubeApiError } from '@loopwright/runtime';
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { atTestbed, condition } from './at-controller.test-support.ts';
import { loadAtCrd, type AtCrd } from './crd.ts';
import { parseSchedule } from './schedule.ts';
import { installAtCrd } from './crd.test-support.ts';

describe('at-scheduler on a real control plane: schedules', () => {
  const bed = atTestbed('at-schedule');
  const { createAt, getAt, podsOf, getPod, eventsFor } = bed;

  it('rejects an invalid schedule and an empty command at admission; accepts offsets and fractions', async () => {
    for (const [name, spec] of [
      ['bad-schedule', { schedule: 'tomorrow at noon', command: 'true' }],
      ['bad-date', { schedule: '2019-02-30T10:00:00Z', command: 'true' }],
      ['no-command', { schedule: '2019-04-12T10:12:00Z', command: '' }],
      ['no-schedule', { command: 'true' }],
    ] as const) {
      await assert.rejects(
        createAt(name, spec),
        (error: unknown) => error instanceof KubeApiError && error.reason === 'Invalid',
        name,
      );
    }
    // The API server admits strict RFC 3339 only (observed on 1.36); whatever it admits, the controller
    // must parse. The parser's extra tolerance is for values stored before the schema validated them.
    const variants: [string, boolean][] = [
      ['2019-04-12T10:12:00.123456789Z', true],
      ['2019-04-12t10:12:00z', true],
      ['2019-04-12T10:12:00.5-07:30', true],
      ['2019-04-12T10:12:00', false],
      ['2019-04-12 10:12:00Z', false],
      ['2019-04-12T10:12Z', false],
      ['2019-04-12T10:12:00+0200', false],
      ['2019-04-12', false],
      ['20190412T101200Z', false],
    ];
    for (const [i, [schedule, expected]] of variants.entries()) {
      const admitted = await bed.ats
        .create(
          {
            apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
            kind: 'At',
            metadata: { name: `variant-${i}`, namespace: bed.ns.name },
            spec: { schedule, command: 'true' },
          },
          { dryRun: true },
        )
        .then(
          () => true,
          () => false,
        );
      assert.equal(admitted, expected, schedule);
      if (admitted)
        assert.ok(
          parseSchedule(schedule).ok,
          `the API server admits "${schedule}" but the controller cannot parse it`,
        );
    }
    await createAt('offset', { schedule: '2099-04-12T12:12:00.123+02:00', command: 'true' });
    await eventually(async () => {
      assert.equal((await getAt('offset')).status?.phase, 'PENDING');
    });
  });

  it('waits until a future schedule without polling, then creates the pod right after it, never before', async () => {
    const scheduleMs = Math.ceil((Date.now() + 2500) / 1000) * 1000 + 500;
    const schedule = new Date(scheduleMs).toISOString();
    const at = await createAt('future', { schedule, command: 'date' });
    // PENDING is the CRD's default: shown at once, written by nobody.
    assert.equal((await getAt('future')).status?.phase, 'PENDING');
    while (Date.now() < scheduleMs - 150) {
      assert.equal((await podsOf(at)).length, 0, 'no pod before the schedule');
      await sleep(100);
    }
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 1);
      },
      { timeoutMs: 5000 },
    );
    const start = bed.controller.starts.find((s) => s.name === 'future');
    assert.ok(start);
    assert.ok(start.issuedMs >= scheduleMs, `created ${start.issuedMs - scheduleMs} ms early`);
    // Behaviour, not performance: a polling loop (the book's 10 s resync) would be seconds late.
    assert.ok(start.issuedMs - scheduleMs < 2000, `created ${start.issuedMs - scheduleMs} ms late`);
    // Its first status write is the start: nothing is written while it waits.
    assert.equal(bed.controller.statusWrites.get('future'), 1);
    assert.equal((await getAt('future')).status?.phase, 'RUNNING');
    await eventually(async () => {
      assert.deepEqual(
        (await eventsFor('future')).map((e) => e.reason),
        ['Started'],
      );
    });
  });

  it('reschedules when the schedule changes while pending', async () => {
    const at = await createAt('moved', {
      schedule: new Date(Date.now() + 3_600_000).toISOString(),
      command: 'true',
    });
    await eventually(async () => {
      assert.equal((await getAt('moved')).status?.phase, 'PENDING');
    });
    const soon = Date.now() + 1000;
    await bed.ats.patch(
      { namespace: bed.ns.name, name: 'moved' },
      { merge: { spec: { schedule: new Date(soon).toISOString() } } },
    );
    await eventually(
      async () => {
        assert.equal((await podsOf(at)).length, 1);
      },
      { timeoutMs: 5000 },
    );
    const start = bed.controller.starts.find((s) => s.name === 'moved');
    assert.equal(start?.scheduleMs, soon);
    assert.ok(start.issuedMs >= soon);
  });

  it('a stored schedule that does not parse is reported once (condition + Event), not retried in a loop; a fix runs it', async () => {
    // Only an older CRD could have stored this: loosen the schema for one create, then restore it.
    const crd = loadAtCrd();
    const loose = structuredClone(crd) as AtCrd & {
      spec: {
        versions: [
          {
            schema: {
              openAPIV3Schema: {
                properties: { spec: { properties: { schedule: Record<string, unknown> } } };
              };
            };
          },
        ];
      };
    };
    delete loose.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.schedule.format;
    try {
      // Loosened before each attempt: another test file of the run may apply the chart's CRD meanwhile.
      await eventually(
        async () => {
          await installAtCrd(bed.kc, loose);
          await createAt('garbled', { schedule: 'next tuesday', command: 'true' });
        },
        { timeoutMs: 10_000 },
      );
    } finally {
      await installAtCrd(bed.kc, crd);
    }
    await eventually(async () => {
      assert.equal(condition(await getAt('garbled'), 'InvalidSchedule'), 'True');
    });
    await eventually(async () => {
      assert.ok(
        (await eventsFor('garbled')).some((e) => e.reason === 'InvalidSchedule' && e.type === 'Warning'),
      );
    });
    await sleep(1500);
    assert.equal(bed.controller.statusWrites.get('garbled'), 1, 'one status write, no retry loop');
    assert.equal((await eventsFor('garbled')).length, 1);

    await bed.ats.patch(
      { namespace: bed.ns.name, name: 'garbled' },
      { merge: { spec: { schedule: '2019-04-12T10:12:00Z' } } },
    );
    await eventually(() => getPod('garbled-pod'));
    await eventually(async () => {
      assert.equal(condition(await getAt('garbled'), 'InvalidSchedule'), 'False');
    });
  });
});
