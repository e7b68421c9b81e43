/**
 * `pnpm soak [--duration 2h] [--rate 60] [--out DIR]`: the soak bench (see e2e/README.md, "Soak"). The
 * fault suite's world (chaos/environment.ts: a real node, the three charts installed from this
 * checkout's local release, 2 replicas each) under compressed churn for `--duration`:
 * - the fault suite's load (chaos/load.ts), the small share that really runs pods: an At due every 3 s,
 *   a MailgunCluster every 10 s, a machine every 15 s, kept to a steady population by retire.ts, which
 *   checks each retired object's invariant;
 * - the cheap churn (churn.ts): `--rate` API writes a second that the controllers watch and reconcile
 *   but that start no pod.
 * Every 30 s a sample goes to `<out>/samples.jsonl`; at the end, a table per replica (report.ts), the
 * change rate the bench's own watches saw, how busy the machine was, and the fault suite's invariants
 * (every informer's cache equals a fresh LIST included). Exits 1 when a target is missed, 130 when
 * stopped by SIGINT/SIGTERM, after undoing everything, the node included.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startChaosEnvironment, type ChaosEnvironment } from '../chaos/environment.ts';
import { invariantsHold } from '../chaos/invariants.ts';
import { Load } from '../chaos/load.ts';
import { ChangeCounter, soakKinds } from './change-counter.ts';
import { Churn } from './churn.ts';
import { describeUnfinishedAts } from './diagnose.ts';
import { earlyCheckpointSeconds, missedTargets, replicaFigures, replicaTable } from './report.ts';
import { KEPT, Retirer } from './retire.ts';
import { Sampler } from './sampler.ts';

const SAMPLE_EVERY_SECONDS = 30;
const USAGE = 'usage: pnpm soak [--duration 2h] [--rate 60] [--out DIR]';

const say = (line: string): void => void process.stderr.write(`[soak] ${line}\n`);

/** `2h`, `10m`, `90s` or a sum of them (`1h30m`): seconds. */
function durationSeconds(text: string): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  const seconds = match
    ? Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0)
    : 0;
  if (seconds < 120) throw new Error(`--duration ${text}: expected 2m or longer, as 2h, 10m or 1h30m`);
  return seconds;
}

function options(): { duration: number; rate: number; out: string } {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '2h' },
      rate: { type: 'string', default: '60' },
      out: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const rate = Number(values.rate);
  if (!Number.isInteger(rate) || rate < 1)
    throw new Error(`--rate ${values.rate}: expected a whole number of writes a second`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    duration: durationSeconds(values.duration),
    rate,
    out: values.out ?? join(tmpdir(), `loopwright-soak-${stamp}`),
  };
}

/** Resolves after `ms`, or early (to false) once `signal` aborts. */
async function waitOrStop(ms: number, signal: AbortSignal): Promise<boolean> {
  return sleep(Math.max(0, ms), true, { signal }).catch(() => false);
}

async function soak(
  env: ChaosEnvironment,
  settings: { duration: number; rate: number; out: string },
  stopping: AbortSignal,
): Promise<string[]> {
  const load = new Load(env);
  await load.createClusters(KEPT.clusters);
  await load.addMachines(KEPT.machines);
  const counter = new ChangeCounter(env.admin, soakKinds(env.work.name, env.nodeLabel));
  await counter.start();
  // Due well after its few seconds of life, and before the early checkpoint: at-scheduler keeps a
  // delayed key for every At until its schedule, deleted or not, so that count is steady by then.
  const atLeadMs = Math.max(
    30_000,
    Math.min(600_000, (earlyCheckpointSeconds(settings.duration) * 1000) / 2),
  );
  const churn = new Churn(env, load, { ratePerSecond: settings.rate, atLeadMs });
  const retirer = new Retirer(env, load);
  const samplesPath = join(settings.out, 'samples.jsonl');
  const sampler = new Sampler(env, counter, samplesPath);
  say(`samples every ${SAMPLE_EVERY_SECONDS} s into ${samplesPath}`);

  await sampler.begin();
  const started = performance.now();
  const startCounts = counter.counts();
  const benchCpu = process.cpuUsage();
  load.start();
  churn.start();
  retirer.start();
  let elapsed = 0;
  while (elapsed < settings.duration) {
    elapsed = Math.min(settings.duration, elapsed + SAMPLE_EVERY_SECONDS);
    if (!(await waitOrStop(started + elapsed * 1000 - performance.now(), stopping))) break;
    try {
      const sample = await sampler.sample(elapsed);
      const heaps = sample.replicas
        .map((r) => `${r.pod.split('-').at(-1) ?? ''} ${((r.heapAfterGcBytes ?? 0) / 1e6).toFixed(1)}`)
        .join(', ');
      say(
        `${(elapsed / 60).toFixed(1)} min: ${sample.changesPerSecond.total?.toFixed(1)} changes/s, ` +
          `machine CPU ${(sample.machineCpuBusy * 100).toFixed(0)} %, heap after GC (MB) ${heaps}`,
      );
    } catch (error) {
      say(`sample at ${elapsed} s failed: ${String(error)}`);
    }
  }
  const loadSeconds = (performance.now() - started) / 1000;
  const endCounts = counter.counts();
  const { user, system } = process.cpuUsage(benchCpu);
  const benchCpuShare = (user + system) / 1e6 / loadSeconds;
  await Promise.all([churn.stop(), retirer.stop(), load.pause()]);
  await counter.stop();
  if (stopping.aborted) return ['stopped before the end'];

  const changes = Object.entries(endCounts).map(([kind, count]) => ({
    kind,
    perSecond: (count - (startCounts[kind] ?? 0)) / loadSeconds,
  }));
  const changesPerSecond = changes.reduce((sum, { perSecond }) => sum + perSecond, 0);
  const replicas = replicaFigures(sampler.samples, settings.duration);
  const missed = missedTargets(replicas, changesPerSecond);

  say('load stopped; checking the invariants (every informer cache against a fresh LIST included)');
  let invariants: string;
  try {
    const checking = performance.now();
    await invariantsHold(env, load);
    invariants = `held ${((performance.now() - checking) / 1000).toFixed(1)} s after the load stopped`;
  } catch (error) {
    invariants = `FAILED: ${String(error)}`;
    missed.push(`the invariants at the end: ${String(error)}`);
    for (const line of await describeUnfinishedAts(env, load)) say(line);
  }
  missed.push(...retirer.violations.map((violation) => `during the run: ${violation}`));

  const busy = sampler.samples.map((sample) => sample.machineCpuBusy).sort((a, b) => a - b);
  const report = [
    replicaTable(replicas, settings.duration),
    '',
    `changes the bench's watches saw: ${changesPerSecond.toFixed(1)}/s over ${(loadSeconds / 60).toFixed(1)} min ` +
      `(${changes.map(({ kind, perSecond }) => `${kind} ${perSecond.toFixed(1)}`).join(', ')}; ${counter.relists} relists)`,
    `cheap churn: ${churn.requests.sent} writes asked for at ${settings.rate}/s, ${churn.requests.failed} refused` +
      (churn.failures().length > 0 ? ` (${churn.failures().join('; ')})` : ''),
    `machine CPU busy (2 CPUs, everything on the machine): median ${percentOf(busy[Math.floor(busy.length / 2)])}, ` +
      `max ${percentOf(busy.at(-1))}; this bench (churn, watches, the fakes) used ${percentOf(benchCpuShare)} of one CPU`,
    `checked and retired during the run: ${retirer.retired.ats} Ats, ${retirer.retired.clusters} MailgunClusters, ` +
      `${retirer.retired.machines} machines (and ${retirer.retired.uninitialisedNodes} Nodes never initialised, ` +
      `deleted by the bench); ${retirer.violations.length} violations`,
    `invariants at the end: ${invariants}`,
    '',
    missed.length === 0 ? 'every target met' : `MISSED:\n${missed.map((line) => `- ${line}`).join('\n')}`,
  ].join('\n');
  process.stdout.write(`\n${report}\n`);
  await writeFile(join(settings.out, 'report.txt'), `${report}\n`);
  say(`samples: ${samplesPath}; this report: ${join(settings.out, 'report.txt')}`);
  return missed;
}

const percentOf = (ratio: number | undefined): string =>
  ratio === undefined ? '-' : `${(ratio * 100).toFixed(0)} %`;

async function main(): Promise<void> {
  const settings = options();
  await mkdir(settings.out, { recursive: true });
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      if (stop.signal.aborted) {
        // The next node to start puts the machine back (the node's lock keeps what to restore).
        say('second signal: exiting without cleaning up');
        process.exit(130);
      }
      say(`${signal}: stopping; everything is undone, the node included (a second signal exits at once)`);
      stop.abort();
    });
  say(`${settings.duration / 60} min at ${settings.rate} cheap writes/s; output in ${settings.out}`);
  const env = await startChaosEnvironment();
  let missed: string[] = ['stopped before the load started'];
  try {
    if (!stop.signal.aborted) missed = await soak(env, settings, stop.signal);
  } finally {
    await env.stop();
  }
  // Exits rather than waiting for the event loop to drain: a kept-alive connection to the stopped API
  // server would hold it.
  process.exit(stop.signal.aborted ? 130 : missed.length > 0 ? 1 : 0);
}

await main();
