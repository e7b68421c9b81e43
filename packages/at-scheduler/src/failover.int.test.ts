/**
 * Leadership failover in the middle of a burst of starts: two replicas of the real program (src/main.ts)
 * with leader election; the leader is SIGKILLed while it starts 100 Ats due at the same moment.
 *
 * A start is a claim (status RUNNING, conditional on the resourceVersion) followed by the pod create,
 * and the pod carries the outcome finalizer. An At whose claim landed and whose create did not has no
 * pod, and since a created pod cannot vanish before its outcome is recorded, the successor knows it was
 * never created and creates it. What this test holds the controller to: every At runs exactly once,
 * those the killed leader had in flight included (none ends Failed/PodDisappeared, none has two pods).
 *
 * No kubelet: pods stay Pending and a started At stays RUNNING, and nothing deletes a pod, so the pods
 * listed at the end are every pod ever created.
 */
import { createTestNamespace, eventually, loadTestKubeConfig } from '@loopwright/envtest';
import { KubeClient, type KubeObject } from '@loopwright/runtime';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { installAtCrd } from './crd.test-support.ts';
import type { At } from './generated/types.ts';
import { AT_API_VERSION, AT_KIND, AT_RESOURCE, POD_RESOURCE, POD_SELECTOR, type Pod } from './resource.ts';

const LEASE_RESOURCE = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
};
/** The Lease both replicas compete for: --leader-election-id defaults to the program's name. */
const LEASE_NAME = 'at-scheduler';

const AT_COUNT = 100;

type LogLine = Record<string, unknown>;

interface Replica {
  identity: string;
  lines: LogLine[];
  stderr(): string;
  /** Resolves when the process has exited and its stdout has been read to the end. */
  closed: Promise<void>;
  kill(signal: NodeJS.Signals): void;
}

/** One replica of the program, as a Deployment's pod would run it (identity = --pod-name). */
function startReplica(namespace: string, identity: string): Replica {
  const child = spawn(
    process.execPath,
    ['--conditions=development', fileURLToPath(new URL('./main.ts', import.meta.url))],
    {
      env: {
        ...process.env,
        WATCH_NAMESPACE: namespace,
        LEADER_ELECTION_NAMESPACE: namespace,
        POD_NAME: identity,
        // The Lease timings are the program's defaults (controller-runtime's 15 s / 10 s / 2 s): the
        // standby takes over up to 15 s after the leader's last renewal. Shorter ones fail the test, not
        // the controller: with a 1.5 s renew deadline the survivor, busy starting the rest of the burst on
        // a loaded machine, can miss it, step down as it must, and leave nobody to end the lost starts.
        HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
        METRICS_BIND_ADDRESS: '127.0.0.1:0',
        LOG_FORMAT: 'json',
        // The reconciler's "decided" lines are debug.
        LOG_LEVEL: 'debug',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: LogLine[] = [];
  let stderr = '';
  // stdout is a pipe, written synchronously on Linux: every line logged before SIGKILL arrives here.
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      lines.push({ message: line });
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<void>((resolve) =>
    child.on('close', () => {
      resolve();
    }),
  );
  return {
    identity,
    lines,
    stderr: () => stderr,
    closed,
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** The replica's health server port, once it logged it. */
function portOf(replica: Replica): number {
  return Number(replica.lines.find((l) => typeof l.port === 'number')?.port ?? 0);
}

/** Names of the Ats in `namespace` for which `replica` logged `message` (with `extra` fields). */
function atsLogged(
  replica: Replica,
  namespace: string,
  message: string,
  extra: Record<string, unknown> = {},
): Set<string> {
  return new Set(
    replica.lines
      .filter(
        (l) =>
          l.message === message &&
          l.namespace === namespace &&
          Object.entries(extra).every(([key, value]) => l[key] === value),
      )
      .map((l) => String(l.name)),
  );
}

describe('at-scheduler leadership failover during a burst of starts', () => {
  it('every At runs exactly once, the starts the killed leader had in flight included', async (t) => {
    const kc = loadTestKubeConfig();
    const client = new KubeClient(kc, { rateLimit: false });
    await installAtCrd(kc);
    const ns = await createTestNamespace(kc, 'at-failover');
    const replicas = [startReplica(ns.name, 'replica-a'), startReplica(ns.name, 'replica-b')];
    const diagnostics = (): string => replicas.map((r) => `${r.identity} stderr: ${r.stderr()}`).join('\n');
    try {
      // Both ready (caches synced), so the standby can take over with a warm cache.
      for (const replica of replicas) {
        await eventually(
          async () => {
            const port = portOf(replica);
            assert.ok(port > 0, diagnostics());
            assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
          },
          { timeoutMs: 30_000 },
        );
      }
      let holder = '';
      await eventually(
        async () => {
          holder =
            (
              await client
                .resource<KubeObject & { spec?: { holderIdentity?: string } }>(LEASE_RESOURCE)
                .get({ namespace: ns.name, name: LEASE_NAME })
            ).spec?.holderIdentity ?? '';
          const leading = replicas.find((r) => r.identity === holder);
          assert.ok(
            leading?.lines.some((l) => l.message === 'started leading'),
            `holder "${holder}"`,
          );
        },
        { timeoutMs: 30_000 },
      );
      const leader = replicas.find((r) => r.identity === holder);
      const standby = replicas.find((r) => r.identity !== holder);
      assert.ok(leader && standby);

      // Due together, late enough for the leader to cache all of them first.
      const scheduleMs = Math.ceil((Date.now() + 10_000) / 1000) * 1000;
      const names = Array.from({ length: AT_COUNT }, (_, i) => `burst-${String(i).padStart(3, '0')}`);
      await Promise.all(
        names.map((name) =>
          client.resource<At>(AT_RESOURCE).create({
            apiVersion: AT_API_VERSION,
            kind: AT_KIND,
            metadata: { name, namespace: ns.name },
            spec: { schedule: new Date(scheduleMs).toISOString(), command: 'true' },
          }),
        ),
      );
      // Cached and waiting: the leader has decided about every one of them (it waits for the schedule).
      await eventually(
        () => {
          assert.equal(atsLogged(leader, ns.name, 'decided').size, AT_COUNT);
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      const waitingAheadMs = scheduleMs - Date.now();
      // The burst must start from Ats that all wait for the same moment (else the test proves less).
      assert.ok(waitingAheadMs > 0, 'the leader saw the Ats only after they became due');

      // Killed as soon as its log shows a first finished start: mid-burst on a fast machine and on a
      // loaded one alike (a fixed delay after the schedule could land before the first start or after
      // the last).
      await sleep(Math.max(0, scheduleMs - Date.now()));
      await eventually(
        () => {
          assert.ok(atsLogged(leader, ns.name, 'started the command').size > 0);
        },
        { timeoutMs: 30_000, intervalMs: 2 },
      );
      leader.kill('SIGKILL');
      await leader.closed;

      // The killed leader's starts: begun (decided; the claim is sent after), claimed (the claim's answer
      // came back) and finished (the create's did). A claim the API server applied may have gone unanswered,
      // so what was in flight is counted from the decisions.
      const begun = atsLogged(leader, ns.name, 'decided', { action: 'start' });
      const claimed = atsLogged(leader, ns.name, 'recorded RUNNING; creating the pod');
      const finished = atsLogged(leader, ns.name, 'started the command');
      const inFlight = new Set([...begun].filter((name) => !finished.has(name)));
      // Not vacuous: the kill came in the middle of the burst.
      assert.ok(finished.size > 0, 'the leader was killed before it started any At');
      assert.ok(finished.size < AT_COUNT, 'the leader started every At before it was killed');

      // The survivor takes over: it starts the rest, and creates the pods of claims without one after
      // START_GRACE_MS.
      await eventually(
        () => {
          assert.ok(
            standby.lines.some((l) => l.message === 'started leading'),
            diagnostics(),
          );
        },
        // The lease duration after the leader's last renewal, one retry period, and room for a busy machine.
        { timeoutMs: 60_000 },
      );
      const listAts = async (): Promise<At[]> =>
        (await client.resource<At>(AT_RESOURCE).list({ namespace: ns.name })).items;
      let ats: At[] = [];
      let pods: Pod[] = [];
      await eventually(
        async () => {
          ats = await listAts();
          pods = (
            await client.resource<Pod>(POD_RESOURCE).list({ namespace: ns.name, labelSelector: POD_SELECTOR })
          ).items;
          const podNames = new Set(pods.map((pod) => pod.metadata?.name));
          const unsettled = ats.filter(
            (at) => at.status?.phase !== 'DONE' && !podNames.has(at.status?.podName),
          );
          assert.deepEqual(
            unsettled.map((at) => `${at.metadata?.name} ${at.status?.phase}`),
            [],
            // What the survivor did last explains a stall (lost leadership, an API error, a slow start).
            `survivor's last lines:\n${standby.lines
              .slice(-15)
              .map((l) => JSON.stringify(l))
              .join('\n')}\n${diagnostics()}`,
          );
        },
        // The survivor starts the rest one claim and one create each, through its client's rate limiter,
        // and completes the interrupted ones after START_GRACE_MS: on a machine busy with other suites and
        // a CPU burner, over a minute (seen: dozens still RUNNING or PENDING after 60 s, none of them wrongly).
        { timeoutMs: 180_000, intervalMs: 500 },
      );

      const podsByOwner = Map.groupBy(
        pods,
        (pod) => pod.metadata?.ownerReferences?.find((ref) => ref.controller === true)?.uid ?? '',
      );
      // Exactly once: no At ended without its pod (before this fix, a claim whose create the kill cut off
      // ended Failed/PodDisappeared), and each has one pod, the one its claim names.
      const ended = ats
        .filter((at) => at.status?.phase === 'DONE')
        .map((at) => `${at.metadata?.name} ${at.status?.outcome}/${at.status?.reason}`);
      assert.deepEqual(ended, [], `in flight at the kill: ${[...inFlight].join(', ')}`);
      for (const at of ats) {
        const name = at.metadata?.name ?? '';
        const own = podsByOwner.get(at.metadata?.uid ?? '') ?? [];
        assert.equal(at.status?.phase, 'RUNNING', name);
        assert.equal(own.length, 1, name);
        assert.equal(own[0]?.metadata?.name, at.status.podName, name);
      }
      assert.equal(pods.length, AT_COUNT, 'every pod belongs to an At, one each');
      // The survivor created a pod only where the killed leader's create had not gone through.
      const startedBySurvivor = atsLogged(standby, ns.name, 'started the command');
      assert.deepEqual(
        [...startedBySurvivor].filter((name) => finished.has(name)),
        [],
      );
      const completed = atsLogged(
        standby,
        ns.name,
        'the claimed pod was never created (it would carry the outcome finalizer); claimed again, creating it',
      );
      assert.deepEqual(
        [...completed].filter((name) => !inFlight.has(name)),
        [],
        'the survivor completed only claims the killed leader had in flight',
      );
      t.diagnostic(
        `killed leader: ${finished.size} started, ${inFlight.size} in flight (${[...inFlight].filter((name) => claimed.has(name)).length} of them claimed); claims completed by the survivor: ${completed.size} (${[...completed].join(', ')}); all cached and waiting ${waitingAheadMs} ms before due`,
      );
    } finally {
      for (const replica of replicas) replica.kill('SIGKILL');
      await Promise.all(replicas.map((r) => r.closed));
      await ns.cleanup();
      await client.close();
    }
  });
});
