/** The Node fields the controllers read, as plain JSON (the informer caches raw API objects). */
import type { KubeObject, ObjectMeta, ResourceType } from '@loopwright/runtime';
import type { NodeAddress } from './node-mapping.ts';

/** The Node resource, for `client.resource<Node>(NODES)`: every read and write of a Node goes through its handle. */
export const NODES: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'nodes',
  kind: 'Node',
  namespaced: false,
};

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
}

export interface Node extends KubeObject {
  metadata?: ObjectMeta & { annotations?: Record<string, string>; creationTimestamp?: string };
  spec?: { providerID?: string; taints?: Taint[] };
  status?: { conditions?: NodeCondition[]; addresses?: NodeAddress[] };
}

/**
 * The Node cache's transform: keeps `metadata`, `spec` and, of `status`, the conditions and addresses,
 * all the controllers read, and drops the rest of the status kubelet reports: above all `images` (up
 * to 50 entries of names, digests and sizes, often most of a Node's bytes), then `nodeInfo`,
 * `capacity`, `allocatable` and the volume lists. Writes are merge patches, which never send what the
 * cache dropped. A new object, so that every cached Node has the same shape.
 */
export function keepNodeFieldsRead(node: Node): Node {
  return {
    apiVersion: node.apiVersion,
    kind: node.kind,
    metadata: node.metadata,
    spec: node.spec,
    status: { conditions: node.status?.conditions, addresses: node.status?.addresses },
  };
}

export function hasTaint(node: Node, key: string): boolean {
  return node.spec?.taints?.some((t) => t.key === key) ?? false;
}

/** kubelet's Ready condition: `True`, `False`, or `Unknown` (also when the condition is missing). */
export function readyStatus(node: Node): 'True' | 'False' | 'Unknown' {
  const status = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return status === 'True' || status === 'False' ? status : 'Unknown';
}

export function nodeName(node: Node): string {
  return node.metadata?.name ?? '';
}

/** The regarding reference of an Event about this Node. */
export function nodeRef(node: Node): { apiVersion: string; kind: string; name: string; uid?: string } {
  const uid = node.metadata?.uid;
  return { apiVersion: 'v1', kind: 'Node', name: nodeName(node), ...(uid ? { uid } : {}) };
}
