/**
 * Failover with warm and cold standbys: how long after the leader dies the new leader reconciles, and
 * what a warm standby's caches cost in memory while it waits.
 *
 *   pnpm bench                                   # within the package's benches
 *   flock /tmp/loopwright-bench.lock pnpm exec node --conditions=development bench/failover.bench.ts
 *   AT_FAILOVER_KILLS=20 AT_FAILOVER_OBJECTS=10000 # kills per mode, Ats in the caches (these defaults)
 *   AT_FAILOVER_DEBUG=1                          # every replica's log lines on stderr
 *
 * One fresh control plane; 10,000 Ats already DONE (each reconcile of one decides nothing, so the new
 * leader's first reconcile is what is timed, not its writes). Two replicas of the released program (the
 * bundle the image holds) with leader election on Lease timings short enough to keep the bench bounded
 * (LEASE_FLAGS). Each kill: the standby is started (warm or cold, alternating kill by kill, so both
 * modes meet the same machine and the same control plane), waits until it is ready, the leader has
 * reconciled every At, and the standby's memory has settled; then the leader is SIGKILLed (no release: the
 * standby waits for the Lease to expire, as after a node's loss). Timed from the kill, in this process:
 * until the standby logged 'started leading', and until its `controller_runtime_reconcile_total` first
 * read above 0 (polled every POLL_MS). The new leader stays; the next standby is started beside it.
 *
 * Memory, sampled from each standby just before the kill: its RSS (/proc) and V8's used heap
 * (`nodejs_heap_size_used_bytes`). A warm standby holds every At in its cache (and its pods informer,
 * empty here); a cold one holds nothing yet.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient } from '@loopwright/runtime';
import { AT_RESOURCE, type At } from '../src/index.ts';
import { benchNamespace, createAts, forEachConcurrently } from './ats.ts';
import { bundleReleasedProgram } from './controller-bundle.ts';
import { withFreshPlane } from './plane.ts';
import { Replica, type StandbyMode } from './replica.ts';
import { percentile } from './stats.ts';

const KILLS = Number(process.env.AT_FAILOVER_KILLS ?? 20);
const OBJECTS = Number(process.env.AT_FAILOVER_OBJECTS ?? 10_000);
const LEASE_DURATION_S = 4;
const RETRY_PERIOD_S = 1;
const LEASE_FLAGS = [
  `--leader-elect-lease-duration=${LEASE_DURATION_S}s`,
  '--leader-elect-renew-deadline=3s',
  `--leader-elect-retry-period=${RETRY_PERIOD_S}s`,
];
/** The target for a warm standby: it takes the Lease within a lease duration and a retry period of the kill, and reconciles within a second of that. */
const WARM_TARGET_S = LEASE_DURATION_S + RETRY_PERIOD_S + 1;
const POLL_MS = 50;
/** After a standby is ready, how long its memory is left to settle (the initial list's garbage collected) before it is sampled. */
const SETTLE_MS = 3000;
/** Generous bounds on each wait; crossing one fails the bench. */
const WAIT_MS = 120_000;

interface Kill {
  mode: StandbyMode;
  /** Seconds from the kill. */
  leading: number;
  firstReconcile: number;
  rssBytes: number;
  heapUsedBytes: number;
}

const out = (line: string): boolean => process.stdout.write(`${line}\n`);

async function until(what: string, done: () => Promise<boolean>, intervalMs = POLL_MS): Promise<void> {
  const deadline = performance.now() + WAIT_MS;
  while (!(await done().catch(() => false))) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** `count` Ats, each marked DONE for its generation as the controller would have left it. */
async function doneAts(admin: KubeClient, namespace: string, count: number): Promise<void> {
  const past = Date.now() - 3_600_000;
  const ats = await createAts(
    admin,
    namespace,
    Array.from({ length: count }, () => past),
  );
  const status = admin.resource<At>(AT_RESOURCE).status;
  await forEachConcurrently(ats.length, async (i) => {
    const at = ats[i];
    if (at === undefined) return;
    await status.patch(
      { namespace, name: at.metadata.name },
      {
        merge: {
          status: {
            phase: 'DONE',
            observedGeneration: at.metadata.generation ?? 1,
            outcome: 'Succeeded',
            completionTime: new Date(past).toISOString(),
          },
        },
      },
    );
  });
}

function row(label: string, values: readonly number[], format: (value: number) => string): string {
  const cells = [0, 50, 99].map((p) => format(percentile(values, p)).padStart(10));
  return `${label.padEnd(34)}${cells.join('')}`;
}

const seconds = (value: number): string => `${value.toFixed(2)} s`;
const mebibytes = (value: number): string => `${(value / 2 ** 20).toFixed(1)} MiB`;

out(
  `failover bench: ${OBJECTS} Ats (DONE), 2 replicas, ${KILLS} SIGKILLs of the leader per standby mode, ` +
    `warm and cold alternating; ${LEASE_FLAGS.join(' ')}`,
);
const bundle = await bundleReleasedProgram();
try {
  const kills = await withFreshPlane(async ({ kc, admin, kubeconfigPath }) => {
    const namespace = await benchNamespace(kc, 'failover');
    const setUpStart = performance.now();
    await doneAts(admin, namespace, OBJECTS);
    out(
      `set-up: ${OBJECTS} Ats created and DONE in ${((performance.now() - setUpStart) / 1000).toFixed(1)} s`,
    );

    let serial = 0;
    const start = (mode: StandbyMode): Replica =>
      new Replica({
        main: bundle.main,
        kubeconfigPath,
        namespace,
        identity: `replica-${serial++}-${mode}`,
        mode,
        args: LEASE_FLAGS,
      });
    let leader = start('warm');
    await until('the first leader', () => Promise.resolve(leader.leadingAt() !== undefined));
    const results: Kill[] = [];
    try {
      for (let i = 0; i < 2 * KILLS; i++) {
        const mode: StandbyMode = i % 2 === 0 ? 'warm' : 'cold';
        const standby = start(mode);
        try {
          await until(`${standby.identity} ready`, () => standby.ready());
          await until(
            `${leader.identity} to reconcile every At`,
            async () => (await leader.reconciles()) >= OBJECTS,
          );
          await sleep(SETTLE_MS);
          if (standby.leadingAt() !== undefined) throw new Error(`${standby.identity} leads before the kill`);
          const rssBytes = await standby.rssBytes();
          const heapUsedBytes = (await standby.metrics()).get('nodejs_heap_size_used_bytes') ?? Number.NaN;

          const killedAt = performance.now();
          await leader.kill();
          await until(`${standby.identity} to reconcile`, async () => (await standby.reconciles()) > 0);
          const reconciledAt = performance.now();
          const leadingAt = standby.leadingAt() ?? Number.NaN;
          results.push({
            mode,
            leading: (leadingAt - killedAt) / 1000,
            firstReconcile: (reconciledAt - killedAt) / 1000,
            rssBytes,
            heapUsedBytes,
          });
          out(
            `  kill ${String(i + 1).padStart(2)} (${mode}): leading after ${seconds((leadingAt - killedAt) / 1000)}, ` +
              `first reconcile after ${seconds((reconciledAt - killedAt) / 1000)}; standby before: ` +
              `RSS ${mebibytes(rssBytes)}, heap ${mebibytes(heapUsedBytes)}`,
          );
          leader = standby;
        } catch (error) {
          await standby.kill();
          throw error;
        }
      }
    } finally {
      await leader.kill();
    }
    return results;
  });

  out('');
  out(`${''.padEnd(34)}${'min'.padStart(10)}${'median'.padStart(10)}${'p99'.padStart(10)}`);
  for (const mode of ['warm', 'cold'] as const) {
    const ofMode = kills.filter((kill) => kill.mode === mode);
    out(`${mode} standby, ${ofMode.length} kills`);
    out(
      row(
        '  kill -> new leader leads',
        ofMode.map((kill) => kill.leading),
        seconds,
      ),
    );
    out(
      row(
        '  kill -> its first reconcile',
        ofMode.map((kill) => kill.firstReconcile),
        seconds,
      ),
    );
    out(
      row(
        '  standby RSS before the kill',
        ofMode.map((kill) => kill.rssBytes),
        mebibytes,
      ),
    );
    out(
      row(
        '  standby heap used before the kill',
        ofMode.map((kill) => kill.heapUsedBytes),
        mebibytes,
      ),
    );
  }
  const median = (mode: StandbyMode, pick: (kill: Kill) => number): number =>
    percentile(kills.filter((kill) => kill.mode === mode).map(pick), 50);
  out(
    `warm standby's caches of ${OBJECTS} Ats (median warm - median cold): ` +
      `RSS ${mebibytes(median('warm', (k) => k.rssBytes) - median('cold', (k) => k.rssBytes))}, ` +
      `heap ${mebibytes(median('warm', (k) => k.heapUsedBytes) - median('cold', (k) => k.heapUsedBytes))}`,
  );
  const warmP99 = percentile(
    kills.filter((kill) => kill.mode === 'warm').map((kill) => kill.firstReconcile),
    99,
  );
  out(
    `target: warm kill -> first reconcile p99 <= lease duration + retry period + 1 s = ${WARM_TARGET_S} s: ` +
      `${warmP99 <= WARM_TARGET_S ? 'met' : 'NOT met'} (${seconds(warmP99)}; p99 of ${KILLS} is their maximum)`,
  );
} finally {
  await bundle.remove();
}
