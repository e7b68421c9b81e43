/**
 * The MailgunCluster and MailgunMachine controllers: what each watches, which of those events
 * reconcile, how events on Cluster API objects map to keys, and how failed reconciles are retried.
 */
import { keyFor, type SharedInformerFactory } from '@loopwright/informer';
import {
  Controller,
  generationChanged,
  ignoreStatusOnlyUpdates,
  type GroupVersionResource,
  type KubeObject,
  type Predicate,
} from '@loopwright/runtime';
import {
  bucketRateLimiter,
  exponentialFailureRateLimiter,
  maxOfRateLimiter,
  type RateLimiter,
} from '@loopwright/workqueue';
import { requestApi, type RuntimeWriter } from './api.ts';
import type { MailgunCluster, MailgunMachine } from './generated/types.ts';
import { mailgunClusterKind, mailgunMachineKind } from './kinds.ts';
import type { MailgunService } from './mailgun.ts';
import type { MailgunMetrics } from './metrics.ts';
import { createRequestReconciler, type SendCheckpoint } from './reconcile.ts';
import {
  CLUSTERS,
  INFRA_GROUP,
  MACHINES,
  MAILGUN_CLUSTERS,
  MAILGUN_MACHINES,
  isCapiReference,
  type CapiObject,
  type RequestObject,
} from './resource.ts';

export interface ControllerSettings {
  /** undefined: all namespaces. One namespace: one pair of controllers, named after it. */
  namespace: string | undefined;
  workers: number;
  kube: RuntimeWriter;
  mail: MailgunService;
  /** Where every request mail goes. */
  recipient: string;
  /** How old an attempt must be before a missing `accepted` event means it was never sent. */
  eventsSettleMs: number;
  /** The wait after a 401 before the next send. */
  unauthorizedRetryMs: number;
  /** mailgun-cluster's own families (metrics.ts): each scope's MailgunClusters are counted when unsent. */
  metrics?: Pick<MailgunMetrics, 'countUnsentIn'>;
  /** See `RequestReconcilerOptions.sendCheckpoint`: the crash tests' hook, none in production. */
  sendCheckpoint?: (checkpoint: SendCheckpoint) => void;
}

/**
 * Which events of a MailgunCluster/MailgunMachine reconcile it: every change but one of status alone.
 * The controller's own status writes (a claim, a failure) would otherwise reconcile the object again at
 * once and send again before the retry backoff has passed. Metadata changes pass: Cluster API setting
 * the ownerReference, the pause annotation, the message-id annotation.
 */
export const requestPredicate: Predicate = ignoreStatusOnlyUpdates;

/**
 * Which events of Clusters and Machines reconcile the objects they map to: creation (an owner appears
 * in the cache) and spec changes (pause, infrastructureRef), not status updates: Cluster API mirrors
 * every status change of ours into the Cluster's status, which would retrigger us just the same.
 */
export const ownerPredicate: Predicate = generationChanged;

/**
 * A failed reconcile (Mailgun unavailable, 429, 5xx, a lost conflict) is retried after 1 s, doubling per
 * further failure of the object up to 5 min, and at most 10 retries per second overall (burst 100), as
 * client-go's default limiter does with 5 ms: Mailgun would not thank us for retrying that fast.
 */
export function retryRateLimiter(): RateLimiter {
  return maxOfRateLimiter(
    exponentialFailureRateLimiter(1000, 5 * 60_000),
    bucketRateLimiter({ qps: 10, burst: 100 }),
  );
}

/** Informer index: `namespace/ownerName` of an object's owner of the index's kind. */
const OWNER_INDEX = 'owner';

function scope({ group, version, plural }: GroupVersionResource, namespace: string | undefined) {
  return { group, version, plural, ...(namespace ? { namespace } : {}) };
}

function ownerIndex(ownerKind: string) {
  return (obj: KubeObject): string[] =>
    (obj.metadata?.ownerReferences ?? [])
      .filter((reference) => isCapiReference(reference, ownerKind))
      .map((reference) => keyFor(obj.metadata?.namespace, reference.name));
}

/** Keys of the infrastructure object a Cluster/Machine points at, plus those that name it as owner. */
function mapToInfra(
  infraKind: string,
  infraObjects: { byIndex(index: string, value: string): KubeObject[] },
) {
  return (owner: CapiObject): string[] => {
    const namespace = owner.metadata?.namespace;
    const keys = new Set<string>();
    const ref = owner.spec?.infrastructureRef;
    if (ref?.kind === infraKind && ref.apiGroup === INFRA_GROUP && ref.name)
      keys.add(keyFor(namespace, ref.name));
    for (const obj of infraObjects.byIndex(OWNER_INDEX, keyFor(namespace, owner.metadata?.name ?? '')))
      keys.add(keyFor(obj.metadata?.namespace, obj.metadata?.name ?? ''));
    return [...keys];
  };
}

export function createControllers(
  factory: SharedInformerFactory,
  settings: ControllerSettings,
): Controller<RequestObject>[] {
  const { namespace } = settings;
  const reconcilerOptions = {
    api: requestApi(settings.kube, settings.mail),
    recipient: settings.recipient,
    eventsSettleMs: settings.eventsSettleMs,
    unauthorizedRetryMs: settings.unauthorizedRetryMs,
    sendCheckpoint: settings.sendCheckpoint,
  };
  const clusters = factory.forResource<CapiObject>(scope(CLUSTERS, namespace));
  const machines = factory.forResource<CapiObject>(scope(MACHINES, namespace));
  const mailgunClusters = factory.forResource<MailgunCluster>({
    ...scope(MAILGUN_CLUSTERS, namespace),
    indexers: { [OWNER_INDEX]: ownerIndex('Cluster') },
  });
  const mailgunMachines = factory.forResource<MailgunMachine>({
    ...scope(MAILGUN_MACHINES, namespace),
    indexers: { [OWNER_INDEX]: ownerIndex('Machine') },
  });
  settings.metrics?.countUnsentIn(mailgunClusters.lister, clusters.lister);

  const clusterController = new Controller<MailgunCluster>({
    name: namespace === undefined ? 'mailguncluster' : `mailguncluster-${namespace}`,
    for: {
      ...scope(MAILGUN_CLUSTERS, namespace),
      kind: 'MailgunCluster',
      predicate: requestPredicate,
    },
    watches: [
      {
        resource: scope(CLUSTERS, namespace),
        map: mapToInfra('MailgunCluster', mailgunClusters.lister),
        predicate: ownerPredicate,
      },
    ],
    maxConcurrentReconciles: settings.workers,
    rateLimiter: retryRateLimiter(),
    reconcile: createRequestReconciler({ kind: mailgunClusterKind(clusters.lister), ...reconcilerOptions }),
  });

  const machineToInfra = mapToInfra('MailgunMachine', mailgunMachines.lister);
  const machineController = new Controller<MailgunMachine>({
    name: namespace === undefined ? 'mailgunmachine' : `mailgunmachine-${namespace}`,
    for: {
      ...scope(MAILGUN_MACHINES, namespace),
      kind: 'MailgunMachine',
      predicate: requestPredicate,
    },
    watches: [
      {
        resource: scope(MACHINES, namespace),
        map: machineToInfra,
        predicate: ownerPredicate,
      },
      {
        // Pausing or unpausing a Cluster concerns every machine in it.
        resource: scope(CLUSTERS, namespace),
        map: (cluster: CapiObject) =>
          machines.lister
            .list(cluster.metadata?.namespace)
            .filter((machine) => machine.spec?.clusterName === cluster.metadata?.name)
            .flatMap(machineToInfra),
        predicate: ownerPredicate,
      },
    ],
    maxConcurrentReconciles: settings.workers,
    rateLimiter: retryRateLimiter(),
    reconcile: createRequestReconciler({
      kind: mailgunMachineKind(machines.lister, clusters.lister),
      ...reconcilerOptions,
    }),
  });
  return [clusterController, machineController] as unknown as Controller<RequestObject>[];
}
