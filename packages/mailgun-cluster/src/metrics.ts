/**
 * mailgun-cluster's own metric families, on the Manager's registry beside the runtime's: what Mailgun
 * answers, and how many clusters still wait for their mail. Documented in the README's _Metrics_.
 */
import type { Lister } from '@loopwright/informer';
import { Counter, Gauge, type Registry } from 'prom-client';
import { acceptedMessageID, isPaused } from './decide.ts';
import type { MailgunCluster } from './generated/types.ts';
import { capiOwnerName, type CapiObject } from './resource.ts';

export interface MailgunMetrics {
  /** One Mailgun API request ended with this HTTP status, or with none (timeout, refused, reset). */
  requestEnded(statusCode: number | undefined): void;
  /**
   * Counts the unsent MailgunClusters of this cache (one per namespace scope) in
   * `loopwright_mailgun_clusters_unsent`; `clusters` is the same scope's Cluster cache (pause).
   */
  countUnsentIn(
    mailgunClusters: Pick<Lister<MailgunCluster>, 'list'>,
    clusters: Pick<Lister<CapiObject>, 'get'>,
  ): void;
}

/**
 * Whether the controller still owes `object` its mail: none accepted yet (neither status nor annotation
 * records one), and not paused by Cluster API (`cluster`: its owning Cluster, if cached), for which it
 * sends nothing. Every other unsent one counts, whatever holds it up: Mailgun failing or refusing, a
 * send in flight or being confirmed, no owning Cluster yet. A MailgunCluster being deleted counts as
 * long as it is there: the controller does not look at deletion, and would still send for it.
 */
export function isUnsent(object: MailgunCluster, cluster: CapiObject | undefined): boolean {
  return acceptedMessageID(object) === undefined && !isPaused(object, cluster);
}

export function createMailgunMetrics(registry: Registry): MailgunMetrics {
  const scopes: {
    mailgunClusters: Pick<Lister<MailgunCluster>, 'list'>;
    clusters: Pick<Lister<CapiObject>, 'get'>;
  }[] = [];
  const requests = new Counter({
    name: 'loopwright_mailgun_requests_total',
    help: 'Mailgun API requests by HTTP status code, <error> when no response came.',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'loopwright_mailgun_clusters_unsent',
    help: 'MailgunClusters in the cache without an accepted mail, paused ones left out.',
    registers: [registry],
    // Counted from the caches at each scrape: nothing to keep current between scrapes.
    collect() {
      let unsent = 0;
      for (const { mailgunClusters, clusters } of scopes)
        for (const object of mailgunClusters.list()) {
          const owner = capiOwnerName(object, 'Cluster');
          const cluster = owner === undefined ? undefined : clusters.get(object.metadata?.namespace, owner);
          if (isUnsent(object, cluster)) unsent++;
        }
      this.set(unsent);
    },
  });
  return {
    requestEnded(statusCode) {
      // client-go's label for a request without a response, as in rest_client_requests_total.
      requests.inc({ code: statusCode === undefined ? '<error>' : String(statusCode) });
    },
    countUnsentIn(mailgunClusters, clusters) {
      scopes.push({ mailgunClusters, clusters });
    },
  };
}
