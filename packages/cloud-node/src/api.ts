/**
 * Every call the two reconcilers make, Kubernetes and Hetzner Cloud, behind one interface so that the
 * reconcile flow reads as business logic and unit tests replace it with an in-memory fake. Kubernetes
 * calls go through the Manager's `KubeClient` (client-side rate limit, REST metrics); server lookups
 * through the {@link ServerDirectory} (shared snapshot, batching, budget: see there).
 */
import {
  isNotFound,
  mergePatch,
  mergePatchStatus,
  type EventInput,
  type EventRecorder,
  type KubeClient,
} from '@loopwright/runtime';
import { nodeRef, type Node } from './node.ts';
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

const nodePath = (name: string): string => `/api/v1/nodes/${encodeURIComponent(name)}`;
const nodeResource = (name: string) => ({ group: '', version: 'v1', plural: 'nodes', name });
const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

export function createNodeApi({ client, recorder, directory }: NodeApiOptions): NodeApi {
  return {
    getNode: (name, signal) => client.requestJson<Node>('GET', nodePath(name), withSignal(signal)),
    patchNode: (name, patch, resourceVersion, signal) =>
      mergePatch<Node>(client, nodeResource(name), patch, {
        ...(resourceVersion ? { resourceVersion } : {}),
        ...withSignal(signal),
      }),
    patchNodeStatus: (name, patch, signal) =>
      mergePatchStatus<Node>(client, nodeResource(name), patch, withSignal(signal)),
    deleteNode: async (name, preconditions, signal) => {
      try {
        await client.requestJson('DELETE', nodePath(name), {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions },
          ...withSignal(signal),
        });
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
    },
    recordEvent: (node, event) => {
      recorder.event(nodeRef(node), event);
    },
    lookupServer: (ref, options) => directory.lookup(ref, options),
    serverSnapshot: (options) => directory.snapshot(options),
    sweepPages: () => directory.sweepCost,
  };
}
