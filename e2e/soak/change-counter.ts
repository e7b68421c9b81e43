/**
 * The soak's measured change rate: every ADDED, MODIFIED and DELETED event of the bench's own watch on
 * each kind the three controllers watch, in the soak's scope (its namespace; its labelled Nodes). Every
 * write counts, the bench's and the controllers' and the API server's (the garbage collector's deletes,
 * the kubelet's pod status): they are the changes the controllers' informers receive. A watch that ends
 * resumes from its last resourceVersion; after a 410 Gone it lists again, and the events between the
 * two are not counted, so the figure can only be low, never inflated by a relist.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { isGone, type ResourceType } from '@loopwright/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { resource } from '../src/kube.ts';
import { ATS, CLUSTERS, MAILGUN_CLUSTERS, NODES, PODS } from '../src/resources.ts';

/** One watched kind: its name in the report, and the scope the bench watches it in. */
interface Watched {
  name: string;
  type: ResourceType;
  namespace?: string;
  labelSelector?: string;
}

/** The kinds counted: what at-scheduler, mailgun-cluster and cloud-node watch. */
export function soakKinds(namespace: string, nodeLabel: { key: string; value: string }): Watched[] {
  return [
    { name: 'Ats', type: ATS, namespace },
    { name: 'Pods', type: PODS, namespace },
    { name: 'MailgunClusters', type: MAILGUN_CLUSTERS, namespace },
    { name: 'Clusters', type: CLUSTERS, namespace },
    { name: 'Nodes', type: NODES, labelSelector: `${nodeLabel.key}=${nodeLabel.value}` },
  ];
}

export class ChangeCounter {
  readonly #admin: KubeConfig;
  readonly #kinds: readonly Watched[];
  readonly #counts = new Map<string, number>();
  readonly #abort = new AbortController();
  #watches: Promise<void>[] = [];
  /** Lists after a 410 Gone: each is a gap in the count. */
  relists = 0;

  constructor(admin: KubeConfig, kinds: readonly Watched[]) {
    this.#admin = admin;
    this.#kinds = kinds;
    for (const kind of kinds) this.#counts.set(kind.name, 0);
  }

  /** Resolves once every kind is listed: from then on, every change is counted. */
  async start(): Promise<void> {
    const versions = await Promise.all(this.#kinds.map((kind) => this.#list(kind)));
    this.#watches = this.#kinds.map((kind, i) => this.#follow(kind, versions[i] ?? ''));
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await Promise.all(this.#watches);
  }

  /** The changes seen so far, per kind. */
  counts(): Record<string, number> {
    return Object.fromEntries(this.#counts);
  }

  async #list(kind: Watched): Promise<string> {
    const { resourceVersion } = await resource(this.#admin, kind.type).list({
      ...(kind.namespace === undefined ? {} : { namespace: kind.namespace }),
      ...(kind.labelSelector === undefined ? {} : { labelSelector: kind.labelSelector }),
    });
    return resourceVersion;
  }

  async #follow(kind: Watched, listedAt: string): Promise<void> {
    const { signal } = this.#abort;
    let resourceVersion: string | undefined = listedAt;
    while (!signal.aborted) {
      try {
        resourceVersion ??= await this.#list(kind);
        const events = resource(this.#admin, kind.type).watch({
          signal,
          resourceVersion,
          timeoutSeconds: 300,
          ...(kind.namespace === undefined ? {} : { namespace: kind.namespace }),
          ...(kind.labelSelector === undefined ? {} : { labelSelector: kind.labelSelector }),
        });
        for await (const event of events) {
          if (event.type === 'ERROR') {
            if (event.object.code === 410) {
              resourceVersion = undefined;
              this.relists++;
            }
            break;
          }
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          if (event.type !== 'BOOKMARK') this.#counts.set(kind.name, (this.#counts.get(kind.name) ?? 0) + 1);
        }
      } catch (error) {
        // A watch the stop aborted ends quietly; any other failure is retried (the loop checks the stop).
        if (isGone(error)) {
          resourceVersion = undefined;
          this.relists++;
        } else await sleep(1000, undefined, { signal }).catch(() => undefined);
      }
    }
  }
}
