// Generated from charts/mailgun-cluster/crds/infrastructure.cluster.x-k8s.io_mailgunclusters.yaml, charts/mailgun-cluster/crds/infrastructure.cluster.x-k8s.io_mailgunmachines.yaml by `pnpm generate`. Do not edit: edit the CRD and regenerate.
import type { ObjectMeta } from '@loopwright/informer';

/** A cluster requested by email through Mailgun, exactly once. */
export interface MailgunCluster {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** What to request. */
  spec: MailgunClusterSpec;
  status?: MailgunClusterStatus;
}

export interface MailgunClusterStatus {
  /** Mailgun's id of the request mail (with angle brackets), once Mailgun accepted it. */
  messageID?: string;
  /** The latest claimed send; written before the mail is sent so that only one worker sends and a crash can be recovered. */
  sendAttempt?: MailgunClusterStatusSendAttempt;
  observedGeneration?: number;
  initialization?: MailgunClusterStatusInitialization;
  conditions?: MailgunClusterStatusCondition[];
}

export interface MailgunClusterStatusCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message?: string;
}

export interface MailgunClusterStatusInitialization {
  /** Cluster API v1beta2 contract; true once the mail was accepted and spec.controlPlaneEndpoint is set. */
  provisioned?: boolean;
}

/** The latest claimed send; written before the mail is sent so that only one worker sends and a crash can be recovered. */
export interface MailgunClusterStatusSendAttempt {
  id: string;
  startedAt: string;
}

/** What to request. */
export interface MailgunClusterSpec {
  /** How urgent the request is; the mail subject starts with it. */
  priority: 'Urgent' | 'ExtremelyUrgent' | 'BusinessCritical';
  /** Free text describing the wanted cluster; the body of the mail. */
  request: string;
  /** Email address the request is sent from (and answered to). */
  requester: string;
  /** Filled in by whoever fulfils the request; the cluster counts as provisioned once it is set. */
  controlPlaneEndpoint?: MailgunClusterSpecControlPlaneEndpoint;
}

/** Filled in by whoever fulfils the request; the cluster counts as provisioned once it is set. */
export interface MailgunClusterSpecControlPlaneEndpoint {
  host: string;
  port: number;
}

/** A machine requested by email through Mailgun, exactly once. */
export interface MailgunMachine {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** What to request. */
  spec: MailgunMachineSpec;
  status?: MailgunMachineStatus;
}

export interface MailgunMachineStatus {
  /** Mailgun's id of the request mail (with angle brackets), once Mailgun accepted it. */
  messageID?: string;
  /** The latest claimed send; written before the mail is sent so that only one worker sends and a crash can be recovered. */
  sendAttempt?: MailgunMachineStatusSendAttempt;
  observedGeneration?: number;
  initialization?: MailgunMachineStatusInitialization;
  conditions?: MailgunMachineStatusCondition[];
}

export interface MailgunMachineStatusCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message?: string;
}

export interface MailgunMachineStatusInitialization {
  /** Cluster API v1beta2 contract; true once the mail was accepted and spec.providerID is set. */
  provisioned?: boolean;
}

/** The latest claimed send; written before the mail is sent so that only one worker sends and a crash can be recovered. */
export interface MailgunMachineStatusSendAttempt {
  id: string;
  startedAt: string;
}

/** What to request. */
export interface MailgunMachineSpec {
  /** How urgent the request is; the mail subject starts with it. */
  priority: 'Urgent' | 'ExtremelyUrgent' | 'BusinessCritical';
  /** Free text describing the wanted machine; the body of the mail. */
  request: string;
  /** Email address the request is sent from (and answered to). */
  requester: string;
  /** Filled in by whoever fulfils the request; the machine counts as provisioned once it is set. */
  providerID?: string;
}
