/**
 * One phase: a fresh control plane, N MailgunClusters created, then `replicas` replicas of the released
 * program started together, each before a Mailgun front of its own that answers sends after the delay;
 * over when every MailgunCluster got a mail (and a grace period for any second one), or when no mail came
 * for STALL_MS.
 */
import { startMailgunPeer, type AcceptedMail } from '@loopwright/fakes/mailgun';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClusters, type CreatedCluster } from './clusters.ts';
import { replicaMails, type ReplicaMails } from './figures.ts';
import { withFreshPlane } from './plane.ts';
import { Replica, Scrape } from './replica.ts';
import { startSlowMailgun, type AnsweredSend, type SlowMailgun } from './slow-mailgun.ts';

const API_KEY = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';
const DOMAIN = 'mg.example.com';
const RING = 'mailgun-bench';
const POLL_MS = 500;
/** No new mail for this long: the replicas are stuck; the phase ends and says so. */
const STALL_MS = 60_000;
/** After the last MailgunCluster got its mail: time for a second mail of any of them to show. */
const GRACE_MS = 3000;
/** A replica's SIGTERM: drain (one send in flight at most) and delete its Lease. */
const STOP_MS = 30_000;

export interface PhaseSpec {
  main: string;
  replicas: number;
  n: number;
  delayMs: number;
}

export interface ReplicaFigures {
  mails: ReplicaMails;
  /** `controller_runtime_reconcile_total`, every controller and result, at the end. */
  reconciles: number;
  /** `loopwright_mailgun_requests_total`, every code: sends and events lookups. */
  mailgunRequests: number;
  /** `loopwright_shard_owned_fraction` at the end. */
  ownedFraction: number;
  /** `controller_runtime_reconcile_time_seconds_sum`: how long its worker was busy, in all. */
  reconcileSeconds: number;
  /** Its requests to the API server that write (PATCH, POST): how many, and their mean latency. */
  writes: number;
  writeMeanSeconds: number;
}

export interface PhaseOutcome {
  spec: PhaseSpec;
  createSeconds: number;
  /** Epoch ms when the replicas were started. */
  startedMs: number;
  /** Epoch ms when every MailgunCluster had a mail; undefined if that never happened. */
  doneMs: number | undefined;
  /** Why the phase ended early, if it did. */
  stalled: string | undefined;
  replicas: ReplicaFigures[];
  created: CreatedCluster[];
  mails: AcceptedMail[];
  loadAverage: { before: string; after: string };
}

export async function runPhase(spec: PhaseSpec): Promise<PhaseOutcome> {
  return withFreshPlane(async (plane) => {
    const peer = await startMailgunPeer({ apiKey: API_KEY });
    const fronts: SlowMailgun[] = [];
    const replicas: Replica[] = [];
    const dir = await mkdtemp(join(tmpdir(), 'mailgun-bench-phase-'));
    try {
      const createStart = Date.now();
      const created = await createClusters(plane.admin, plane.namespace, spec.n);
      const createSeconds = (Date.now() - createStart) / 1000;
      const apiKeyFile = join(dir, 'api-key');
      await writeFile(apiKeyFile, API_KEY, { mode: 0o600 });
      for (let i = 0; i < spec.replicas; i++) fronts.push(await startSlowMailgun(peer.url, spec.delayMs));
      const loadBefore = await loadAverage();
      const startedMs = Date.now();
      for (const [i, front] of fronts.entries())
        replicas.push(
          await Replica.start({
            main: spec.main,
            kubeconfigPath: plane.kubeconfigPath,
            namespace: plane.namespace,
            ring: RING,
            identity: `mailgun-cluster-${i}`,
            mailgunUrl: front.url,
            mailgunDomain: DOMAIN,
            apiKeyFile,
            recipient: 'ops@example.com',
            logPath: join(dir, `replica-${i}.log`),
          }),
        );
      const { doneMs, stalled } = await untilEveryClusterMailed(() => peer.accepted(), created, replicas);
      await sleep(GRACE_MS);
      const scrapes = await Promise.all(
        replicas.map((replica) => replica.metrics().catch(() => new Scrape(''))),
      );
      if (stalled !== undefined)
        for (const replica of replicas)
          process.stderr.write(`--- ${replica.identity} (last 30 lines) ---\n${await replica.logTail(30)}\n`);
      await Promise.all(replicas.map((replica) => replica.stop(STOP_MS)));
      return {
        spec,
        createSeconds,
        startedMs,
        doneMs,
        stalled,
        created,
        // After every replica stopped: nothing is in flight any more.
        mails: peer.accepted(),
        replicas: replicas.map((replica, i) =>
          figuresOf(replica.identity, fronts[i]?.sends() ?? [], scrapes[i]),
        ),
        loadAverage: { before: loadBefore, after: await loadAverage() },
      };
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop(STOP_MS)));
      await Promise.all(fronts.map((front) => front.stop()));
      await peer.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
}

async function untilEveryClusterMailed(
  accepted: () => AcceptedMail[],
  created: readonly CreatedCluster[],
  replicas: readonly Replica[],
): Promise<{ doneMs: number | undefined; stalled: string | undefined }> {
  const uids = new Set(created.map((c) => c.uid));
  let last = { count: 0, ms: Date.now() };
  for (;;) {
    await sleep(POLL_MS);
    const mails = accepted();
    const mailed = new Set(
      mails.map((m) => m.userVariables['loopwright-uid']).filter((uid) => uids.has(uid ?? '')),
    );
    if (mailed.size === uids.size) return { doneMs: Date.now(), stalled: undefined };
    const exited = replicas.filter((replica) => !replica.running).map((replica) => replica.identity);
    if (exited.length > 0) return { doneMs: undefined, stalled: `${exited.join(', ')} exited` };
    if (mails.length !== last.count) last = { count: mails.length, ms: Date.now() };
    if (Date.now() - last.ms > STALL_MS)
      return {
        doneMs: undefined,
        stalled: `no mail for ${STALL_MS / 1000} s, ${mailed.size} of ${uids.size} mailed`,
      };
  }
}

function figuresOf(
  identity: string,
  sends: readonly AnsweredSend[],
  scrape = new Scrape(''),
): ReplicaFigures {
  const writeVerbs = ['verb="PATCH"', 'verb="POST"'];
  const writes = (suffix: string): number =>
    writeVerbs.reduce(
      (total, verb) => total + scrape.sum(`rest_client_request_duration_seconds${suffix}`, verb),
      0,
    );
  return {
    mails: replicaMails(identity, sends),
    reconciles: scrape.sum('controller_runtime_reconcile_total'),
    mailgunRequests: scrape.sum('loopwright_mailgun_requests_total'),
    ownedFraction: scrape.sum('loopwright_shard_owned_fraction'),
    reconcileSeconds: scrape.sum('controller_runtime_reconcile_time_seconds_sum'),
    writes: writes('_count'),
    writeMeanSeconds: writes('_sum') / writes('_count'),
  };
}

/** The 1, 5 and 15 minute load averages: the machine is shared, and this says how busy it was. */
async function loadAverage(): Promise<string> {
  return (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
}
