/**
 * `pnpm test:chaos`: the fault suite on the real node (see e2e/README.md, "The fault suite"). The three
 * controllers run as their charts install them, 2 replicas each, under continuous load; the faults of
 * issue 38 are injected one after another, and after each the invariants must hold again (invariants.ts)
 * and the controllers' metrics and logs must name what happened. Prints, at the end, per fault: how long
 * the controllers took to notice it, how long after it was undone every invariant held again, and
 * whether they did.
 */
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChaosEnvironment, type ChaosEnvironment } from './environment.ts';
import { faults, type Fault } from './faults.ts';
import { invariantsHold } from './invariants.ts';
import { Load } from './load.ts';

/** How long the load runs before each fault: work in flight when it strikes. */
const LOAD_BEFORE_FAULT_MS = 10_000;

interface Row {
  fault: string;
  detected: string;
  recovered: string;
  ok: string;
}

const seconds = (ms: number | undefined): string => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
const say = (line: string): void => void process.stderr.write(`[chaos] ${line}\n`);

const columns = ['fault', 'detected', 'recovered', 'ok'] as const;

function table(rows: readonly Row[]): string {
  const header: Row = {
    fault: 'fault',
    detected: 'detected after',
    recovered: 'recovered after',
    ok: 'invariants',
  };
  const all = [header, ...rows];
  const width = (key: keyof Row) => Math.max(...all.map((row) => row[key].length));
  const line = (row: Row) => `| ${columns.map((key) => row[key].padEnd(width(key))).join(' | ')} |`;
  const rule = `|${columns.map((key) => '-'.repeat(width(key) + 2)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

describe('the fault suite on the real node', () => {
  let env: ChaosEnvironment;
  let load: Load;
  const rows: Row[] = [];

  before(async () => {
    const started = performance.now();
    env = await startChaosEnvironment();
    load = new Load(env);
    await load.addMachines(4);
    say(`ready in ${seconds(performance.now() - started)}`);
  });

  after(async () => {
    // Undefined when the set-up failed part-way (it undid itself then).
    const started = env as ChaosEnvironment | undefined;
    if (!started) return;
    await load.pause();
    // Fault 7 is not a test: a time namespace offsets CLOCK_MONOTONIC and CLOCK_BOOTTIME only, never the
    // CLOCK_REALTIME that Date.now() reads, and the machine's own clock is not the suite's to step (see
    // e2e/README.md). The table still names it, so that no reader takes its absence for a pass.
    rows.push({ fault: '7. wall clock stepped +/-30 s', detected: '-', recovered: '-', ok: 'not injected' });
    process.stderr.write(`\n${table(rows)}\n\n`);
    await started.stop();
  });

  test('baseline: the invariants hold under load before any fault', async () => {
    load.start();
    await sleep(2 * LOAD_BEFORE_FAULT_MS);
    await load.pause();
    const paused = performance.now();
    await invariantsHold(env, load);
    rows.push({
      fault: '(none: baseline)',
      detected: '-',
      recovered: seconds(performance.now() - paused),
      ok: 'yes',
    });
  });

  const inject = (fault: Fault) =>
    void test(`fault ${fault.id}: ${fault.name}`, async () => {
      const row: Row = {
        fault: `${fault.id}. ${fault.name}`,
        detected: '?',
        recovered: '?',
        ok: 'no',
      };
      rows.push(row);
      load.start();
      await sleep(LOAD_BEFORE_FAULT_MS);
      let outcome;
      try {
        outcome = await fault.inject(env, load);
      } finally {
        await load.pause();
      }
      row.detected = seconds(outcome.detectedAfterMs);
      say(`fault ${fault.id}: ${outcome.detection}`);
      await invariantsHold(env, load);
      row.recovered = seconds(performance.now() - outcome.undoneAt);
      for (const line of await outcome.evidence()) say(`fault ${fault.id} evidence: ${line}`);
      row.ok = 'yes';
    });
  // LOOPWRIGHT_CHAOS_FAULTS=2,5 injects only those (while working on one), in the suite's order.
  const only = process.env.LOOPWRIGHT_CHAOS_FAULTS?.split(',').map(Number);
  for (const fault of faults) if (!only || only.includes(fault.id)) inject(fault);
});
