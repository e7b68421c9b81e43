/**
 * The resources this controller reads and writes: its own MailgunCluster/MailgunMachine (as far as the
 * reconciler uses them) and Cluster API's Cluster/Machine (as far as it reads them).
 */
import {
  groupOf,
  type Condition,
  type KubeObject,
  type ObjectMeta,
  type OwnerReference,
  type ResourceType,
} from '@loopwright/runtime';

export const INFRA_GROUP = 'infrastructure.cluster.x-k8s.io';
export const INFRA_VERSION = 'v1alpha1';
export const CAPI_GROUP = 'cluster.x-k8s.io';
export const CAPI_VERSION = 'v1beta2';

/** Cluster API's Clusters, as far as this controller reads them. */
export const CLUSTERS: ResourceType = {
  group: CAPI_GROUP,
  version: CAPI_VERSION,
  plural: 'clusters',
  kind: 'Cluster',
  namespaced: true,
};

/** Cluster API's Machines, as far as this controller reads them. */
export const MACHINES: ResourceType = {
  group: CAPI_GROUP,
  version: CAPI_VERSION,
  plural: 'machines',
  kind: 'Machine',
  namespaced: true,
};

export const MAILGUN_CLUSTERS: ResourceType = {
  group: INFRA_GROUP,
  version: INFRA_VERSION,
  plural: 'mailgunclusters',
  kind: 'MailgunCluster',
  namespaced: true,
};

export const MAILGUN_MACHINES: ResourceType = {
  group: INFRA_GROUP,
  version: INFRA_VERSION,
  plural: 'mailgunmachines',
  kind: 'MailgunMachine',
  namespaced: true,
};

/** Cluster API's pause annotation: its presence (any value) pauses the object. */
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';
/** Keeps a copy of the message id where a backup/restore keeps it (restores usually drop status). */
export const MESSAGE_ID_ANNOTATION = 'mailgun.loopwright.dev/message-id';

/** The claim of one send, recorded in status before the mail goes out. */
export interface SendAttempt {
  id: string;
  /** RFC 3339. */
  startedAt: string;
}

/**
 * A condition as the CRDs store it: `message` is optional there (metav1.Condition requires it, possibly
 * empty), so a condition written without one reads as the empty message.
 */
export type StoredCondition = Omit<Condition, 'message'> & { message?: string };

/** What both kinds share: the fields the reconciler reads and writes. */
export interface RequestObject extends KubeObject {
  metadata?: ObjectMeta;
  spec: { priority: string; request: string; requester: string };
  status?: RequestStatus;
}

export interface RequestStatus {
  messageID?: string;
  sendAttempt?: SendAttempt;
  observedGeneration?: number;
  conditions?: readonly StoredCondition[];
  initialization?: { provisioned?: boolean };
}

/**
 * A Cluster API object as far as this controller reads it (Cluster or Machine), at {@link CAPI_VERSION}:
 * the version Cluster API stores, so the API server serves it without its conversion webhook.
 */
export interface CapiObject extends KubeObject {
  spec?: {
    paused?: boolean;
    clusterName?: string;
    infrastructureRef?: { apiGroup?: string; kind?: string; name?: string };
  };
}

/** `reference` names a Cluster API object of `kind` (`Cluster`, `Machine`), in any version. */
export function isCapiReference(reference: OwnerReference, kind: string): boolean {
  return reference.kind === kind && groupOf(reference.apiVersion) === CAPI_GROUP;
}

/** The name of the object's owner of `kind`; undefined while Cluster API has not set the reference. */
export function capiOwnerName(object: KubeObject, kind: string): string | undefined {
  return object.metadata?.ownerReferences?.find((reference) => isCapiReference(reference, kind))?.name;
}
