/**
 * Wiring: the MailgunCluster and MailgunMachine controllers, their watches on Cluster API objects and
 * the cache indexes those watches use.
 */
import { keyFor, type KubeObject, type SharedInformerFactory } from '@loopwright/informer';
import { Controller } from '@loopwright/runtime';
import type { MailgunCluster, MailgunMachine } from './generated/types.ts';
import { clusterRequestMail, machineRequestMail } from './mail.ts';
import {
  CAPI_GROUP,
  INFRA_GROUP,
  INFRA_VERSION,
  requestReconciler,
  type CapiObject,
  type ReconcilerDeps,
  type RequestObject,
} from './request-reconciler.ts';

const CAPI_VERSION = 'v1beta2';
/** Informer index: `namespace/ownerName` of an object's owner of the index's kind. */
const OWNER_INDEX = 'owner';

export interface ControllerSettings extends ReconcilerDeps {
  /** undefined: all namespaces. One namespace: one pair of controllers, named after it. */
  namespace: string | undefined;
  workers: number;
}

function scope(group: string, version: string, plural: string, namespace: string | undefined) {
  return { group, version, plural, ...(namespace ? { namespace } : {}) };
}

function ownerIndex(ownerKind: string) {
  return (obj: KubeObject): string[] =>
    (obj.metadata?.ownerReferences ?? [])
      .filter((r) => r.kind === ownerKind && r.apiVersion.startsWith(`${CAPI_GROUP}/`))
      .map((r) => keyFor(obj.metadata?.namespace, r.name));
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
    const refGroup = ref?.apiGroup ?? ref?.apiVersion?.split('/')[0];
    if (ref?.kind === infraKind && refGroup === INFRA_GROUP && ref.name)
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
  const clusters = factory.forResource<CapiObject>(scope(CAPI_GROUP, CAPI_VERSION, 'clusters', namespace));
  const machines = factory.forResource<CapiObject>(scope(CAPI_GROUP, CAPI_VERSION, 'machines', namespace));
  const mailgunClusters = factory.forResource<MailgunCluster>({
    ...scope(INFRA_GROUP, INFRA_VERSION, 'mailgunclusters', namespace),
    indexers: { [OWNER_INDEX]: ownerIndex('Cluster') },
  });
  const mailgunMachines = factory.forResource<MailgunMachine>({
    ...scope(INFRA_GROUP, INFRA_VERSION, 'mailgunmachines', namespace),
    indexers: { [OWNER_INDEX]: ownerIndex('Machine') },
  });

  const clusterController = new Controller<MailgunCluster>({
    name: namespace === undefined ? 'mailguncluster' : `mailguncluster-${namespace}`,
    for: { ...scope(INFRA_GROUP, INFRA_VERSION, 'mailgunclusters', namespace), kind: 'MailgunCluster' },
    watches: [
      {
        resource: scope(CAPI_GROUP, CAPI_VERSION, 'clusters', namespace),
        map: mapToInfra('MailgunCluster', mailgunClusters.lister),
      },
    ],
    maxConcurrentReconciles: settings.workers,
    reconcile: requestReconciler<MailgunCluster>(
      {
        kind: 'MailgunCluster',
        plural: 'mailgunclusters',
        ownerKind: 'Cluster',
        getOwner: (ns, name) => clusters.lister.get(ns, name),
        clusterOf: (_ns, owner) => owner,
        fulfilled: (object) => object.spec.controlPlaneEndpoint !== undefined,
        mail: (object, owner, recipient, markers) =>
          clusterRequestMail({ ...object.spec, clusterName: owner.metadata?.name ?? '', recipient, markers }),
      },
      settings,
    ),
  });

  const machineToInfra = mapToInfra('MailgunMachine', mailgunMachines.lister);
  const machineController = new Controller<MailgunMachine>({
    name: namespace === undefined ? 'mailgunmachine' : `mailgunmachine-${namespace}`,
    for: { ...scope(INFRA_GROUP, INFRA_VERSION, 'mailgunmachines', namespace), kind: 'MailgunMachine' },
    watches: [
      { resource: scope(CAPI_GROUP, CAPI_VERSION, 'machines', namespace), map: machineToInfra },
      {
        // Pausing or unpausing a Cluster concerns every machine in it.
        resource: scope(CAPI_GROUP, CAPI_VERSION, 'clusters', namespace),
        map: (cluster: CapiObject) =>
          machines.lister
            .list(cluster.metadata?.namespace)
            .filter((m) => m.spec?.clusterName === cluster.metadata?.name)
            .flatMap(machineToInfra),
      },
    ],
    maxConcurrentReconciles: settings.workers,
    reconcile: requestReconciler<MailgunMachine>(
      {
        kind: 'MailgunMachine',
        plural: 'mailgunmachines',
        ownerKind: 'Machine',
        getOwner: (ns, name) => machines.lister.get(ns, name),
        clusterOf: (ns, owner) =>
          owner.spec?.clusterName ? clusters.lister.get(ns, owner.spec.clusterName) : undefined,
        fulfilled: (object) => object.spec.providerID !== undefined,
        mail: (object, owner, recipient, markers) =>
          machineRequestMail({
            ...object.spec,
            machineName: owner.metadata?.name ?? '',
            clusterName: owner.spec?.clusterName ?? '',
            recipient,
            markers,
          }),
      },
      settings,
    ),
  });
  return [clusterController, machineController] as unknown as Controller<RequestObject>[];
}
