/**
 * The two request kinds: whose mail a MailgunCluster and a MailgunMachine send, which Cluster pauses
 * them and what fulfils them.
 */
import type { Lister } from '@loopwright/informer';
import type { MailgunCluster, MailgunMachine } from './generated/types.ts';
import { clusterRequestMail, machineRequestMail } from './mail.ts';
import type { RequestKind } from './reconcile.ts';
import { MAILGUN_CLUSTERS, MAILGUN_MACHINES, type CapiObject } from './resource.ts';

type Cache = Pick<Lister<CapiObject>, 'get'>;

/** Owned by a Cluster, which also pauses it; fulfilled once `spec.controlPlaneEndpoint` is set. */
export function mailgunClusterKind(clusters: Cache): RequestKind<MailgunCluster> {
  return {
    resource: MAILGUN_CLUSTERS,
    ownerKind: 'Cluster',
    getOwner: (namespace, name) => clusters.get(namespace, name),
    clusterOf: (_namespace, owner) => owner,
    fulfilled: (object) => object.spec.controlPlaneEndpoint !== undefined,
    mail: (object, owner, recipient, markers) =>
      clusterRequestMail({ ...object.spec, clusterName: owner.metadata?.name ?? '', recipient, markers }),
  };
}

/** Owned by a Machine, paused by the Machine's Cluster; fulfilled once `spec.providerID` is set. */
export function mailgunMachineKind(machines: Cache, clusters: Cache): RequestKind<MailgunMachine> {
  return {
    resource: MAILGUN_MACHINES,
    ownerKind: 'Machine',
    getOwner: (namespace, name) => machines.get(namespace, name),
    clusterOf: (namespace, owner) =>
      owner.spec?.clusterName ? clusters.get(namespace, owner.spec.clusterName) : undefined,
    fulfilled: (object) => object.spec.providerID !== undefined,
    mail: (object, owner, recipient, markers) =>
      machineRequestMail({
        ...object.spec,
        machineName: owner.metadata?.name ?? '',
        clusterName: owner.spec?.clusterName ?? '',
        recipient,
        markers,
      }),
  };
}
