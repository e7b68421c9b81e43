/**
 * From the objects as the API server returns them to the table's rows, and whether each has converged
 * to what its controller promises. Pure: the shapes below are the few fields the demo reads.
 */
import { UNINITIALIZED_TAINT } from './names.ts';
import type { Row } from './table.ts';

interface Meta {
  metadata: { name: string; creationTimestamp?: string; labels?: Record<string, string> };
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

export interface At extends Meta {
  spec: { schedule: string; command: string };
  status?: { phase?: string; outcome?: string; podName?: string; exitCode?: number; reason?: string };
}

export interface MailgunCluster extends Meta {
  status?: { messageID?: string; conditions?: Condition[] };
}

export interface Node extends Meta {
  spec?: { providerID?: string; taints?: { key: string; effect: string }[] };
}

const missing = (kind: string, name: string): Row => ({
  kind,
  name,
  status: '-',
  detail: 'not created yet',
  createdAt: undefined,
  converged: false,
});

function clock(iso: string): string {
  const time = new Date(iso);
  return Number.isNaN(time.getTime()) ? iso : time.toLocaleTimeString('en-GB', { hour12: false });
}

/** PENDING -> RUNNING -> DONE, converged when DONE with outcome Succeeded. */
export function atRow(name: string, at: At | undefined): Row {
  if (!at) return missing('At', name);
  const { phase, outcome, podName, exitCode, reason } = at.status ?? {};
  let status = phase ?? '-';
  let detail: string;
  if (phase === 'DONE') {
    status = `DONE/${outcome ?? '?'}`;
    detail = [exitCode === undefined ? reason : `exit code ${exitCode}`, podName && `pod ${podName}`]
      .filter(Boolean)
      .join(', ');
  } else if (phase === 'RUNNING') detail = `pod ${podName ?? '?'} started, waiting for it to finish`;
  else detail = `runs \`${at.spec.command}\` at ${clock(at.spec.schedule)}`;
  return {
    kind: 'At',
    name,
    status,
    detail,
    createdAt: at.metadata.creationTimestamp,
    converged: phase === 'DONE' && outcome === 'Succeeded',
  };
}

/**
 * Converged when the request mail is out: a message id and `RequestSent=True`. `Ready` stays False
 * (`WaitingForFulfilment`) by design: a mail is a request, a human still has to build the cluster.
 */
export function mailgunClusterRow(name: string, object: MailgunCluster | undefined): Row {
  if (!object) return missing('MailgunCluster', name);
  const conditions = object.status?.conditions ?? [];
  const requestSent = conditions.find((c) => c.type === 'RequestSent');
  const ready = conditions.find((c) => c.type === 'Ready');
  const messageID = object.status?.messageID;
  const status = requestSent
    ? requestSent.status === 'True'
      ? 'RequestSent'
      : (requestSent.reason ?? `RequestSent=${requestSent.status}`)
    : '-';
  const detail = [
    messageID ? `message ${messageID}` : 'no request mail yet',
    ready && `Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ''}`,
  ]
    .filter(Boolean)
    .join(', ');
  return {
    kind: 'MailgunCluster',
    name,
    status,
    detail,
    createdAt: object.metadata.creationTimestamp,
    converged: Boolean(messageID) && requestSent?.status === 'True',
  };
}

/**
 * Converged when cloud-node has initialised it from the fake server: the expected providerID, the
 * uninitialized taint removed, and the instance-type and zone labels set.
 */
export function nodeRow(name: string, node: Node | undefined, expectedProviderID: string): Row {
  if (!node) return missing('Node', name);
  const labels = node.metadata.labels ?? {};
  const tainted = (node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT);
  const providerID = node.spec?.providerID;
  const instanceType = labels['node.kubernetes.io/instance-type'];
  const zone = labels['topology.kubernetes.io/zone'];
  const detail = [
    providerID ?? 'no providerID',
    tainted ? `taint ${UNINITIALIZED_TAINT}` : 'untainted',
    instanceType && `instance-type=${instanceType}`,
    zone && `zone=${zone}`,
  ]
    .filter(Boolean)
    .join(', ');
  const converged =
    providerID === expectedProviderID && !tainted && instanceType !== undefined && zone !== undefined;
  return {
    kind: 'Node',
    name,
    status: tainted ? 'Uninitialized' : providerID ? 'Initialized' : '-',
    detail,
    createdAt: node.metadata.creationTimestamp,
    converged,
  };
}

/** An object of a controller without a scenario of its own (generic-samples.ts). */
export interface ReadyObject extends Meta {
  status?: { conditions?: Condition[] };
}

/** Converged when its `Ready` condition is True. */
export function readyRow(kind: string, name: string, object: ReadyObject | undefined): Row {
  if (!object) return missing(kind, name);
  const ready = object.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    kind,
    name,
    status: ready ? `Ready=${ready.status}` : '-',
    detail: ready?.reason ?? 'no Ready condition yet',
    createdAt: object.metadata.creationTimestamp,
    converged: ready?.status === 'True',
  };
}
