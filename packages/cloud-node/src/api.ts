/**
 * Every call the two reconcilers make, Kubernetes and Hetzner Cloud, behind one interface so that the
 * reconcile flow reads as business logic and unit tests replace it with an in-memory fake. Kubernetes
 * calls go through a Node handle of the Manager's `KubeClient` (client-side rate limit, REST metrics);
 * server lookups through the {@link ServerDirectory} (shared snapshot, batching, budget: see there).
 *
 * The Node writes are JSON merge patches, not server-side apply: the taints are an atomic list (an
 * applied list would take the whole list from kubelet and every other writer), so a taint change is
 * computed from the Node it applies to and made conditional on its resourceVersion; and
 * `status.addresses` is one field whose merge patch is the smallest write there is.
 */
import type { EventInput, EventRecorder, KubeClient } from '@loopwright/runtime';
import { NODES, nodeRef, type Node } from './node.ts';
import type {
  Lookup,
  LookupOptions,
  ServerDirectory,
  ServerRef,
  SnapshotResult,
} from './server-directory.ts';

export interface NodeApi {
  /** A live read of the Node (not the cache), e.g. after a 409 Conflict. */
  getNode(name: string, signal?: AbortSignal): Promise<Node>;
  /** Merge patch conditional on `resourceVersion` (409 Conflict when stale). */
  patchNode(
    name: string,
    patch: Record<string, unknown>,
    resourceVersion: string | undefined,
    signal?: AbortSignal,
  ): Promise<Node>;
  /** Merge patch of the `nodes/status` subresource. */
  patchNodeStatus(name: string, patch: Record<string, unknown>, signal?: AbortSignal): Promise<Node>;
  /** Deletes only the Node with this uid and resourceVersion (409 otherwise); `false` if it was already gone. */
  deleteNode(
    name: string,
    preconditions: { uid?: string; resourceVersion?: string },
    signal?: AbortSignal,
  ): Promise<boolean>;
  /** An Event about the Node; returns at once and never throws (the runtime's recorder). */
  recordEvent(node: Node, event: EventInput): void;
  /** One server, as fresh as `options.maxAgeMs` asks; `unknown` whenever the API did not say. */
  lookupServer(ref: ServerRef, options: LookupOptions): Promise<Lookup>;
  /** All servers, no older than `options.maxAgeMs`. */
  serverSnapshot(options: LookupOptions): Promise<SnapshotResult>;
  /** Requests one sweep of all servers costs (its pages, as the last sweep counted them). */
  sweepPages(): number;
}

export interface NodeApiOptions {
  client: KubeClient;
  recorder: Pick<EventRecorder, 'event'>;
  directory: Pick<ServerDirectory, 'lookup' | 'snapshot' | 'sweepCost'>;
}

export function createNodeApi({ client, recorder, directory }: NodeApiOptions): NodeApi {
  const nodes = client.resource<Node>(NODES);
  return {
    getNode: (name, signal) => nodes.get({ name }, { signal }),
    patchNode: (name, patch, resourceVersion, signal) =>
      nodes.patch({ name }, { merge: patch }, { resourceVersion, signal }),
    patchNodeStatus: (name, patch, signal) => nodes.status.patch({ name }, { merge: patch }, { signal }),
    deleteNode: (name, preconditions, signal) => nodes.delete({ name }, { preconditions, signal }),
    recordEvent: (node, event) => {
      recorder.event(nodeRef(node), event);
    },
    lookupServer: (ref, options) => directory.lookup(ref, options),
    serverSnapshot: (options) => directory.snapshot(options),
    sweepPages: () => directory.sweepCost,
  };
}
