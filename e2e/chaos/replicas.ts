/**
 * What the suite reads of the controllers' replicas: their pods (address, restarts, how the last
 * container ended), their Lease, their /metrics and their cache dump, each on the pod's IP over the
 * node bridge, where the host reaches them even while a pod's traffic to the API server is dropped.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '@loopwright/client';
import { resource } from '../src/kube.ts';
import { LEASES, PODS } from '../src/resources.ts';
import { CACHE_DUMP_PORT, METRICS_PORT, type Controller } from './environment.ts';

export interface Replica {
  name: string;
  ip: string;
  ready: boolean;
  /** The controller container's id, without the runtime's `containerd://`. */
  containerId: string;
  restarts: number;
  /** How the previous container of the pod ended, if one did. */
  lastTermination?: { reason: string; finishedAt: string };
}

interface Pod extends KubeObject {
  metadata: { name: string; deletionTimestamp?: string };
  status: {
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      name: string;
      containerID?: string;
      restartCount: number;
      lastState?: { terminated?: { reason?: string; finishedAt?: string } };
    }[];
  };
}

/** The controller's live pods (not being deleted) that have an address. */
export async function replicasOf(admin: KubeConfig, controller: Controller): Promise<Replica[]> {
  const { items } = await resource<Pod>(admin, PODS).list({
    namespace: controller.namespace,
    labelSelector: controller.selector,
  });
  return items.flatMap((pod) => {
    const container = pod.status.containerStatuses?.find((c) => c.name === 'controller');
    if (pod.metadata.deletionTimestamp || !pod.status.podIP || !container) return [];
    const terminated = container.lastState?.terminated;
    return [
      {
        name: pod.metadata.name,
        ip: pod.status.podIP,
        ready: pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
        containerId: (container.containerID ?? '').replace(/^\w+:\/\//, ''),
        restarts: container.restartCount,
        ...(terminated
          ? { lastTermination: { reason: terminated.reason ?? '', finishedAt: terminated.finishedAt ?? '' } }
          : {}),
      },
    ];
  });
}

export interface LeaseState {
  /** The pod holding it (client-go's identity is `<pod>_<uuid>`; the charts set the pod's name). */
  holder: string;
  renewTime: number;
  acquireTime: number;
}

export async function leaseOf(admin: KubeConfig, controller: Controller): Promise<LeaseState> {
  const { spec } = await resource<
    KubeObject & { spec: { holderIdentity?: string; renewTime?: string; acquireTime?: string } }
  >(admin, LEASES).get({ namespace: controller.namespace, name: controller.lease });
  return {
    holder: (spec.holderIdentity ?? '').split('_')[0] ?? '',
    renewTime: Date.parse(spec.renewTime ?? ''),
    acquireTime: Date.parse(spec.acquireTime ?? ''),
  };
}

/** The leader and the standby of a controller's two replicas, by the Lease. */
export async function leaderAndStandby(
  admin: KubeConfig,
  controller: Controller,
): Promise<{ leader: Replica; standby: Replica }> {
  const { holder } = await leaseOf(admin, controller);
  const replicas = await replicasOf(admin, controller);
  const leader = replicas.find((replica) => replica.name === holder);
  const standby = replicas.find((replica) => replica.name !== holder && replica.ready);
  if (!leader || !standby)
    throw new Error(`${controller.name}: no leader and Ready standby among ${JSON.stringify(replicas)}`);
  return { leader, standby };
}

/** A replica's /metrics, or undefined while it does not answer (a restarting container). */
export async function scrape(replica: Pick<Replica, 'ip'>): Promise<Metrics | undefined> {
  const response = await fetch(`http://${replica.ip}:${METRICS_PORT}/metrics`, {
    signal: AbortSignal.timeout(3000),
  }).catch(() => undefined);
  if (!response?.ok) return undefined;
  return new Metrics(await response.text());
}

/** The samples of a Prometheus text exposition. */
export class Metrics {
  readonly #samples: { name: string; labels: Record<string, string>; value: number }[] = [];

  constructor(text: string) {
    for (const line of text.split('\n')) {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
      if (!match) continue;
      const labels: Record<string, string> = {};
      for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
        if (key !== undefined) labels[key] = value ?? '';
      this.#samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
    }
  }

  /** The family's samples, one `{labels} value` each: what a failure message shows. */
  samples(name: string): string[] {
    return this.#samples
      .filter((sample) => sample.name === name)
      .map((sample) => `${JSON.stringify(sample.labels)} ${sample.value}`);
  }

  /** The sum of the family's samples whose labels match `labels` (a RegExp matches the whole value). */
  sum(name: string, labels: Record<string, string | RegExp> = {}): number {
    return this.#samples
      .filter(
        (sample) =>
          sample.name === name &&
          Object.entries(labels).every(([key, want]) => {
            const value = sample.labels[key] ?? '';
            return typeof want === 'string' ? value === want : new RegExp(`^(?:${want.source})$`).test(value);
          }),
      )
      .reduce((total, sample) => total + sample.value, 0);
  }
}

/** One informer's cache as the replica dumps it (packages/runtime's `CachedScope`). */
export interface CachedScope {
  group: string;
  version: string;
  plural: string;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  synced: boolean;
  objects: Record<string, string>;
}

export async function cacheDumpOf(replica: Pick<Replica, 'ip'>): Promise<CachedScope[]> {
  const response = await fetch(`http://${replica.ip}:${CACHE_DUMP_PORT}/cache`, {
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`cache dump of ${replica.ip}: ${response.status}`);
  return (await response.json()) as CachedScope[];
}
