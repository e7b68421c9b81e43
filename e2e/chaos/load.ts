/**
 * The suite's continuous load, and the record of everything it asked for, which the invariants hold the
 * controllers to:
 * - Ats due a few seconds after their creation, each running busybox `true` (at-scheduler);
 * - MailgunClusters owned by Clusters (Cluster API's manager makes the owner reference), each to be
 *   mailed once (mailgun-cluster);
 * - Nodes registered as a kubelet with `--cloud-provider=external` does, each after its server was
 *   added to the fake Hetzner project (cloud-node initialises them), and some servers deleted again, so
 *   that their Nodes must go while every other Node stays.
 * Every request is retried until the API server takes it: the faults make it refuse or vanish for a
 * while, and a load that stopped at the first error would test nothing after it.
 */
import { isAlreadyExists, type KubeObject, type ResourceType } from '@loopwright/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { resource } from '../src/kube.ts';
import { ATS, CLUSTERS, MAILGUN_CLUSTERS, NODES } from '../src/resources.ts';
import { kubeletlessNode } from '../src/kubeletless-node.ts';
import type { ChaosEnvironment } from './environment.ts';

/** An At the suite created: due at `schedule`. */
export interface RequestedAt {
  name: string;
  schedule: number;
}

/** A machine: a server in the fake project and the Node registered for it. */
export interface Machine {
  node: string;
  serverId: number;
  /** False once the suite deleted the server: the Node must then go. */
  serverExists: boolean;
}

/** On every suite Node: nothing tolerates it, so no pod is scheduled onto a Node without a kubelet. */
const NO_KUBELET_TAINT = { key: 'loopwright.dev/chaos-no-kubelet', value: 'true', effect: 'NoSchedule' };

/** How often each driver acts while the load runs. */
const PERIODS = { at: 3000, cluster: 10_000, machine: 15_000 } as const;
/** How long after its creation an At is due. */
const AT_LEAD_MS = 3000;

export class Load {
  readonly ats: RequestedAt[] = [];
  /** MailgunCluster name -> uid (the controller marks its mail with the uid). */
  readonly clusters = new Map<string, string>();
  readonly machines: Machine[] = [];
  readonly #env: ChaosEnvironment;
  #counter = 0;
  #running = false;
  #drivers: Promise<void>[] = [];

  constructor(env: ChaosEnvironment) {
    this.#env = env;
  }

  /** Starts the drivers (each acts once at once, then every period). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#drivers = [
      this.#every(PERIODS.at, () => this.createAts(1)),
      this.#every(PERIODS.cluster, () => this.createClusters(1)),
      this.#every(PERIODS.machine, () => this.#churnMachines()),
    ];
  }

  /** Stops the drivers; resolves once none is acting (what is asked for is then fixed). */
  async pause(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#drivers);
    this.#drivers = [];
  }

  /** `count` Ats due {@link AT_LEAD_MS} from now. */
  async createAts(count: number): Promise<void> {
    const schedule = Date.now() + AT_LEAD_MS;
    await Promise.all(
      Array.from({ length: count }, async () => {
        const name = `chaos-at-${++this.#counter}`;
        await this.#created(ATS, {
          apiVersion: 'cnat.programming-kubernetes.info/v1alpha1',
          kind: 'At',
          metadata: { namespace: this.#env.work.name, name },
          spec: { schedule: new Date(schedule).toISOString(), command: 'true' },
        });
        this.ats.push({ name, schedule });
      }),
    );
  }

  /** `count` MailgunClusters, each with the Cluster that names it (Cluster API makes it the owner). */
  async createClusters(count: number): Promise<void> {
    const namespace = this.#env.work.name;
    await Promise.all(
      Array.from({ length: count }, async () => {
        const name = `chaos-mg-${++this.#counter}`;
        const mailgunCluster = await this.#created(MAILGUN_CLUSTERS, {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
          kind: 'MailgunCluster',
          metadata: { namespace, name },
          spec: { priority: 'Urgent', request: `cluster ${name}`, requester: 'chaos@example.com' },
        });
        await this.#created(CLUSTERS, {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Cluster',
          metadata: { namespace, name },
          spec: {
            infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'MailgunCluster', name },
          },
        });
        this.clusters.set(name, mailgunCluster.metadata?.uid ?? '');
      }),
    );
  }

  /** `count` new machines: a server, then its uninitialised Node. */
  async addMachines(count: number): Promise<void> {
    const { hcloud, networkId, nodeLabel } = this.#env;
    for (let i = 0; i < count; i++) {
      const id = ++this.#counter;
      const node = `chaos-node-${nodeLabel.value}-${id}`;
      const server = hcloud.servers.add({
        name: node,
        server_type: 'cx22',
        location: 'fsn1',
        private_net: [
          {
            network: networkId,
            ip: `10.0.${Math.floor(id / 250)}.${(id % 250) + 2}`,
            alias_ips: [],
            mac_address: '86:00:00:00:00:01',
          },
        ],
      });
      await this.#created(
        NODES,
        kubeletlessNode(node, { [nodeLabel.key]: nodeLabel.value }, NO_KUBELET_TAINT),
      );
      this.machines.push({ node, serverId: server.id, serverExists: true });
    }
  }

  /** Deletes the server of the oldest machine that still has one: its Node must go. */
  deleteOldestServer(): void {
    const machine = this.machines.find((m) => m.serverExists);
    if (!machine) return;
    this.#env.hcloud.servers.delete(machine.serverId);
    machine.serverExists = false;
  }

  /** One more machine, and every other time one server less: Nodes come and go, most stay. */
  async #churnMachines(): Promise<void> {
    await this.addMachines(1);
    if (this.#counter % 2 === 0) this.deleteOldestServer();
  }

  async #every(periodMs: number, act: () => Promise<void>): Promise<void> {
    while (this.#isRunning()) {
      const started = Date.now();
      await act();
      const rest = periodMs - (Date.now() - started);
      // Pausing ends the wait early, in steps short enough that `pause` resolves soon.
      for (let waited = 0; waited < rest && this.#isRunning(); waited += 250)
        await sleep(Math.min(250, rest));
    }
  }

  // A method, so that TypeScript does not narrow the field across the awaits that change it.
  #isRunning(): boolean {
    return this.#running;
  }

  /**
   * Creates the object, retrying until the API server takes it. An AlreadyExists after a failed attempt
   * is that attempt having landed (its answer lost to the fault): the object is read back.
   */
  async #created(
    type: ResourceType,
    object: KubeObject & { spec: object; status?: object },
  ): Promise<KubeObject> {
    const objects = resource(this.#env.admin, type);
    let failed = false;
    for (;;) {
      try {
        return await objects.create(object);
      } catch (error) {
        if (failed && isAlreadyExists(error))
          return objects.get({ namespace: object.metadata?.namespace, name: object.metadata?.name ?? '' });
        failed = true;
        await sleep(500);
      }
    }
  }
}
