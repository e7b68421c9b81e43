/**
 * The soak's cheap churn: object changes that the controllers must watch, cache and reconcile, but that
 * cost the node no more than an API write each (no pod, no container), so that two CPUs keep up with
 * tens a second for hours:
 * - half are Ats created due `atLeadMs` ahead and deleted again a few seconds later, before they are
 *   due (at-scheduler caches each, queues it for its schedule, and forgets it);
 * - half are annotation patches, in turn on the load's MailgunClusters, their Clusters and its Nodes
 *   that still have a server (a no-op reconcile for each controller that watches them, and a write
 *   that can race the controller's own).
 * The requests are paced to `ratePerSecond` from the start: a driver that fell behind catches up at
 * most one second's worth at once, so a stall shows as a lower achieved rate, not as a burst after it.
 */
import { isNotFound, type KubeObject, type ResourceType } from '@loopwright/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { resource } from '../src/kube.ts';
import { ATS, CLUSTERS, MAILGUN_CLUSTERS, NODES } from '../src/resources.ts';
import type { ChaosEnvironment } from '../chaos/environment.ts';
import type { Load } from '../chaos/load.ts';

const SOAK_TOUCH_ANNOTATION = 'loopwright.dev/soak-touch';
/** Far-ahead Ats alive at once: each lives this many At operations, a few seconds at the default rate. */
const FAR_ATS_ALIVE = 40;
const TICK_MS = 100;

export interface ChurnOptions {
  ratePerSecond: number;
  /** How far ahead of its creation a churned At is due: far beyond its life of a few seconds. */
  atLeadMs: number;
}

export class Churn {
  readonly #env: ChaosEnvironment;
  readonly #load: Load;
  readonly #options: ChurnOptions;
  /** The churned Ats alive, oldest first. */
  readonly #farAts: string[] = [];
  #counter = 0;
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  /** Requests sent, and those the API server refused (a 404 on an object retired meanwhile included). */
  readonly requests = { sent: 0, failed: 0 };
  /** The distinct refusals other than NotFound, for the report. */
  readonly #failures = new Set<string>();

  constructor(env: ChaosEnvironment, load: Load, options: ChurnOptions) {
    this.#env = env;
    this.#load = load;
    this.#options = options;
  }

  start(): void {
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops sending; resolves once every request is answered and every churned At is deleted. */
  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
    await Promise.all(this.#farAts.splice(0).map((name) => this.#deleteAt(name)));
  }

  async #run(): Promise<void> {
    const started = performance.now();
    const { ratePerSecond } = this.#options;
    let sent = 0;
    while (this.#isRunning()) {
      const due = Math.floor(((performance.now() - started) / 1000) * ratePerSecond);
      sent = Math.max(sent, due - ratePerSecond);
      const batch = due - sent;
      if (batch <= 0) {
        await sleep(TICK_MS);
        continue;
      }
      sent += batch;
      await Promise.all(Array.from({ length: batch }, () => this.#send()));
    }
  }

  // A method, so that TypeScript does not narrow the field across the awaits that change it.
  #isRunning(): boolean {
    return this.#running;
  }

  /** Every other request churns an At; the rest patch MailgunClusters, Clusters and Nodes in turn. */
  async #send(): Promise<void> {
    const turn = this.#counter++;
    this.requests.sent++;
    try {
      if (turn % 2 === 0) await this.#churnAt();
      else await this.#touch(turn);
    } catch (error) {
      this.requests.failed++;
      if (!isNotFound(error)) this.#failures.add(String(error).slice(0, 200));
    }
  }

  failures(): string[] {
    return [...this.#failures];
  }

  async #churnAt(): Promise<void> {
    if (this.#farAts.length >= FAR_ATS_ALIVE) {
      await this.#deleteAt(this.#farAts.shift() ?? '');
      return;
    }
    const name = `soak-far-${this.#counter}`;
    this.#farAts.push(name);
    await resource<KubeObject & { spec: object }>(this.#env.admin, ATS).create({
      apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
      kind: 'At',
      metadata: { namespace: this.#env.work.name, name },
      spec: { schedule: new Date(Date.now() + this.#options.atLeadMs).toISOString(), command: 'true' },
    });
  }

  async #deleteAt(name: string): Promise<void> {
    await resource(this.#env.admin, ATS).delete({ namespace: this.#env.work.name, name });
  }

  async #touch(turn: number): Promise<void> {
    const clusters = [...this.#load.clusters.keys()];
    const nodes = this.#load.machines.filter((machine) => machine.serverExists).map((m) => m.node);
    const namespace = this.#env.work.name;
    const kind = Math.floor(turn / 2) % 3;
    const [type, names]: [ResourceType, string[]] =
      kind === 0 ? [MAILGUN_CLUSTERS, clusters] : kind === 1 ? [CLUSTERS, clusters] : [NODES, nodes];
    const name = names[Math.floor(turn / 6) % Math.max(1, names.length)];
    if (name === undefined) return;
    await resource(this.#env.admin, type).patch(
      { ...(type.namespaced ? { namespace } : {}), name },
      { merge: { metadata: { annotations: { [SOAK_TOUCH_ANNOTATION]: String(turn) } } } },
    );
  }
}
