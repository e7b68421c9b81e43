/**
 * Keeps the soak's population steady, so that what grows between the checkpoints is the controllers,
 * not their caches: the fault suite's load (chaos/load.ts) only ever adds. Every round, what the load
 * asked for long enough ago is checked against the same invariants as chaos/invariants.ts, one object
 * at a time, then retired: deleted, and dropped from the load's record, which the final
 * `invariantsHold` then checks whole.
 * - An At due a while ago must be DONE and Succeeded with exactly one pod; it is deleted (its pod goes
 *   with it, by the garbage collector).
 * - A MailgunCluster beyond the newest few (which the churn patches) must have exactly one mail; it and
 *   its Cluster are deleted.
 * - Beyond the newest few machines with a server, the oldest server is deleted (the load's own rule);
 *   a machine whose server is gone must lose its Node, and is dropped once it has (a Node that was
 *   never initialised is deleted by the bench: cloud-node never deletes a Node without a providerID);
 *   a Node must never go while its server exists.
 * What is not there yet {@link LATE_MS} after it was due is a violation, as is a count that is too high.
 */
import { isNotFound, type KubeObject, type OwnerReference } from '@loopwright/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { resource } from '../src/kube.ts';
import { ATS, CLUSTERS, MAILGUN_CLUSTERS, NODES, PODS } from '../src/resources.ts';
import type { ChaosEnvironment } from '../chaos/environment.ts';
import { UNINITIALIZED_TAINT } from '../src/kubeletless-node.ts';
import type { Load } from '../chaos/load.ts';

const ROUND_MS = 10_000;
/** How long after it is due an object is left alone (its last writes settle first). */
const SETTLE_MS = 30_000;
/** How long after it is due a missing outcome is a violation. */
const LATE_MS = 5 * 60_000;
/** MailgunClusters and machines kept for the churn to patch. */
export const KEPT = { clusters: 8, machines: 8 } as const;

interface At extends KubeObject {
  metadata: { name: string; uid: string };
  status?: { phase?: string; outcome?: string };
}

interface Node extends KubeObject {
  metadata: { name: string };
  spec?: { taints?: { key: string }[] };
}

interface OwnedPod extends KubeObject {
  metadata: { ownerReferences?: OwnerReference[] };
}

export class Retirer {
  readonly #env: ChaosEnvironment;
  readonly #load: Load;
  /** When a round first saw each MailgunCluster, and each machine without its server. */
  readonly #seen = new Map<string, number>();
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  readonly retired = { ats: 0, clusters: 0, machines: 0, uninitialisedNodes: 0 };
  readonly violations: string[] = [];

  constructor(env: ChaosEnvironment, load: Load) {
    this.#env = env;
    this.#load = load;
  }

  start(): void {
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (this.#isRunning()) {
      const started = Date.now();
      try {
        await this.#retireAts();
        await this.#retireClusters();
        await this.#retireMachines();
      } catch (error) {
        // A refused LIST or delete: the next round tries again.
        process.stderr.write(`[soak] retiring: ${String(error)}\n`);
      }
      for (let waited = Date.now() - started; waited < ROUND_MS && this.#isRunning(); waited += 250)
        await sleep(250);
    }
  }

  // A method, so that TypeScript does not narrow the field across the awaits that change it.
  #isRunning(): boolean {
    return this.#running;
  }

  async #retireAts(): Promise<void> {
    const now = Date.now();
    const old = this.#load.ats.filter((at) => now - at.schedule > SETTLE_MS);
    if (old.length === 0) return;
    const namespace = this.#env.work.name;
    const ats = new Map(
      (await resource<At>(this.#env.admin, ATS).list({ namespace })).items.map((at) => [
        at.metadata.name,
        at,
      ]),
    );
    const pods = await resource<OwnedPod>(this.#env.admin, PODS).list({
      namespace,
      labelSelector: 'app.kubernetes.io/managed-by=at-scheduler',
    });
    const podsPerOwner = new Map<string, number>();
    for (const pod of pods.items)
      for (const owner of pod.metadata.ownerReferences ?? [])
        if (owner.controller) podsPerOwner.set(owner.uid, (podsPerOwner.get(owner.uid) ?? 0) + 1);
    const done = new Set<string>();
    for (const { name, schedule } of old) {
      const at = ats.get(name);
      const count = at ? (podsPerOwner.get(at.metadata.uid) ?? 0) : 0;
      const late = now - schedule > LATE_MS;
      if (!at) this.violations.push(`At ${name} is gone`);
      else if (count > 1) this.violations.push(`At ${name} has ${count} pods`);
      else if (at.status?.phase === 'DONE') {
        // Without a fault, no At may end without its one pod (PodDisappeared) or fail.
        if (count !== 1 || at.status.outcome !== 'Succeeded')
          this.violations.push(`At ${name} ended with ${count} pods: ${JSON.stringify(at.status)}`);
      } else if (late) this.violations.push(`At ${name} not done after ${LATE_MS / 1000} s`);
      else continue;
      done.add(name);
    }
    await Promise.all(
      [...done].map((name) =>
        resource(this.#env.admin, ATS).delete({ namespace, name }, { propagationPolicy: 'Background' }),
      ),
    );
    this.#drop(this.#load.ats, (at) => done.has(at.name));
    this.retired.ats += done.size;
  }

  async #retireClusters(): Promise<void> {
    const now = Date.now();
    const mails = new Map<string, number>();
    for (const mail of this.#env.mailgun.accepted()) {
      const uid = mail.userVariables['loopwright-uid'] ?? '';
      mails.set(uid, (mails.get(uid) ?? 0) + 1);
    }
    const namespace = this.#env.work.name;
    const names = [...this.#load.clusters.keys()];
    const done: string[] = [];
    for (const name of names.slice(0, Math.max(0, names.length - KEPT.clusters))) {
      const seen = this.#seen.get(name) ?? now;
      this.#seen.set(name, seen);
      const count = mails.get(this.#load.clusters.get(name) ?? '') ?? 0;
      if (count > 1) this.violations.push(`MailgunCluster ${name} got ${count} mails`);
      else if (count === 0 && now - seen > LATE_MS)
        this.violations.push(`MailgunCluster ${name} has no mail after ${LATE_MS / 1000} s`);
      else if (count === 0 || now - seen < SETTLE_MS) continue;
      done.push(name);
    }
    await Promise.all(
      done.flatMap((name) =>
        [CLUSTERS, MAILGUN_CLUSTERS].map((type) =>
          resource(this.#env.admin, type).delete({ namespace, name }),
        ),
      ),
    );
    for (const name of done) {
      this.#load.clusters.delete(name);
      this.#seen.delete(name);
    }
    this.retired.clusters += done.length;
  }

  async #retireMachines(): Promise<void> {
    const now = Date.now();
    const { key, value } = this.#env.nodeLabel;
    const listed = await resource<Node>(this.#env.admin, NODES).list({ labelSelector: `${key}=${value}` });
    const nodes = new Map(listed.items.map((node) => [node.metadata.name, node]));
    const done = new Set<string>();
    for (const machine of this.#load.machines) {
      const hasNode = nodes.has(machine.node);
      if (machine.serverExists) {
        if (!hasNode) {
          this.violations.push(`Node ${machine.node} was deleted, but its server exists`);
          done.add(machine.node);
        }
        continue;
      }
      const gone = this.#seen.get(machine.node) ?? now;
      this.#seen.set(machine.node, gone);
      const uninitialised = nodes
        .get(machine.node)
        ?.spec?.taints?.some((taint) => taint.key === UNINITIALIZED_TAINT);
      if (hasNode && uninitialised) {
        // Never initialised, so no providerID: cloud-node never deletes such a Node (its README says
        // why), and an operator does. So does the bench, for its population to stay steady.
        await resource(this.#env.admin, NODES)
          .delete({ name: machine.node })
          .catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
          });
        this.retired.uninitialisedNodes++;
      } else if (hasNode && now - gone > LATE_MS)
        this.violations.push(`Node ${machine.node} still there ${LATE_MS / 1000} s after its server went`);
      else if (hasNode) continue;
      else this.retired.machines++;
      done.add(machine.node);
    }
    this.#drop(this.#load.machines, (machine) => done.has(machine.node));
    for (const node of done) this.#seen.delete(node);
    const withServer = this.#load.machines.filter((machine) => machine.serverExists).length;
    for (let i = KEPT.machines; i < withServer; i++) this.#load.deleteOldestServer();
  }

  /** Removes the retired records in place: the load keeps adding to the same array meanwhile. */
  #drop<T>(records: T[], retired: (record: T) => boolean): void {
    for (let i = records.length - 1; i >= 0; i--) if (retired(records[i] as T)) records.splice(i, 1);
  }
}
