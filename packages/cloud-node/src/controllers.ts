/**
 * The two controllers, as runtime Controllers over Nodes (keys = Node names), so both run only while
 * this replica holds the Lease and stop with it.
 *
 * Periodic work is expressed as per-Node requeues aligned to the data they used: a reconcile that read
 * the shared server snapshot (or a single lookup) requeues for the moment that data expires. All Nodes
 * that read one snapshot therefore come back together, the first of them triggers the next sweep
 * (single-flight), the rest read it: one sweep per period however many Nodes there are.
 *
 * - `cloud-node` (Node controller): initialises tainted Nodes; refreshes `status.addresses` of
 *   initialised Nodes every `nodeStatusUpdateFrequencyMs` (non-urgent: the budget may stretch it).
 * - `cloud-node-lifecycle`: Ready Nodes lose the shutdown taint (no API call); NotReady ones are checked
 *   every `nodeMonitorPeriodMs` (urgent), tainted when their server is off, deleted when it is
 *   confirmed gone (see `lifecycle-decision.ts`).
 */
import { Controller, type EventRecorder } from '@loopwright/runtime';
import type { Logger } from 'winston';
import { decideLifecycle, planLifecycle, type ServerState } from './lifecycle-decision.ts';
import { patchNodeRetryingConflicts, type NodeApi } from './kube-nodes.ts';
import {
  HCLOUD_API_ERROR_REASON,
  PROVIDED_NODE_IP_ANNOTATION,
  SHUTDOWN_TAINT,
  UNINITIALIZED_TAINT,
} from './names.ts';
import { hasTaint, nodeName, nodeRef, type Node } from './node.ts';
import {
  applyProvidedNodeIp,
  sameAddresses,
  serverAddresses,
  serverLabels,
  type AddressFamily,
} from './node-mapping.ts';
import { formatProviderId, parseProviderId } from './provider-id.ts';
import type { ServerDirectory } from './server-directory.ts';

export interface CloudNodeControllerOptions {
  directory: ServerDirectory;
  nodes: NodeApi;
  recorder: Pick<EventRecorder, 'event'>;
  addressFamily: AddressFamily;
  /** The resolved id of HCLOUD_NETWORK, if set. */
  networkId: number | undefined;
  zoneLabels: boolean;
  nodeMonitorPeriodMs: number;
  nodeStatusUpdateFrequencyMs: number;
  /** Label selector limiting both controllers (the informer only sees matching Nodes). */
  nodeSelector?: string | undefined;
  /** Concurrent reconciles per controller. Default 16 (most wait on one shared sweep). */
  workers?: number;
  now?: () => number;
  /** First retry delay after a failed initialisation (doubling up to 5 min). Default 30 s. */
  initRetryMs?: number;
}

const NODES = { group: '', version: 'v1', plural: 'nodes', kind: 'Node' } as const;
const MAX_INIT_RETRY_MS = 300_000;

export const NODE_CONTROLLER = 'cloud-node';
export const LIFECYCLE_CONTROLLER = 'cloud-node-lifecycle';

export function createCloudNodeControllers(
  options: CloudNodeControllerOptions,
): [Controller<Node>, Controller<Node>] {
  const resource = { ...NODES, ...(options.nodeSelector ? { labelSelector: options.nodeSelector } : {}) };
  const workers = options.workers ?? 16;
  const now = options.now ?? Date.now;
  const untilExpiry = (fetchedAt: number, periodMs: number): number =>
    Math.max(1, fetchedAt + periodMs - now() + 1);
  const initialiser = new Initialiser(options);

  const nodeController = new Controller<Node>({
    name: NODE_CONTROLLER,
    for: resource,
    maxConcurrentReconciles: workers,
    reconcile: async ({ object: node, name, log, signal }) => {
      if (!node) {
        initialiser.forget(name);
        return;
      }
      const providerId = parseProviderId(node.spec?.providerID);
      if (providerId.kind === 'foreign' || providerId.kind === 'robot') return; // not ours: never touched
      if (hasTaint(node, UNINITIALIZED_TAINT)) return initialiser.initialise(node, log, signal);
      // Without the taint and without a providerID the Node is not run with an external cloud provider.
      if (providerId.kind !== 'hcloud') return;
      const period = options.nodeStatusUpdateFrequencyMs;
      const result = await options.directory.snapshot({ maxAgeMs: period, priority: 'refresh', signal });
      if (!result.ok) {
        log.debug('address refresh postponed', { reason: result.reason, retryAfterMs: result.retryAfterMs });
        return { requeueAfterMs: result.retryAfterMs };
      }
      const server = result.snapshot.byId.get(providerId.serverId);
      // Missing from the listing: the lifecycle controller confirms and decides; nothing to refresh.
      if (server) {
        const computed = applyProvidedNodeIp(
          serverAddresses(server, { family: options.addressFamily, networkId: options.networkId }),
          node.metadata?.annotations?.[PROVIDED_NODE_IP_ANNOTATION],
        );
        if (!computed.ok) {
          log.warn('cannot refresh addresses', { reason: computed.reason });
          options.recorder.event(nodeRef(node), {
            type: 'Warning',
            reason: 'AddressesNotUpdated',
            action: 'UpdateAddresses',
            note: computed.reason,
          });
        } else if (!sameAddresses(node.status?.addresses, computed.addresses)) {
          await options.nodes.patchStatus(
            nodeName(node),
            { status: { addresses: computed.addresses } },
            signal,
          );
          log.info('addresses updated', {
            addresses: computed.addresses.map((a) => `${a.type}=${a.address}`).join(' '),
          });
        }
      }
      return { requeueAfterMs: untilExpiry(result.snapshot.takenAt, period) };
    },
  });

  const lifecycleController = new Controller<Node>({
    name: LIFECYCLE_CONTROLLER,
    for: resource,
    maxConcurrentReconciles: workers,
    reconcile: async ({ object: node, log, signal }) => {
      if (!node) return;
      const plan = planLifecycle(node);
      if (plan.kind === 'ignore') return;
      if (plan.kind === 'node-ready') {
        if (plan.hasShutdownTaint) await removeTaint(options.nodes, node, SHUTDOWN_TAINT, signal, log);
        return; // Ready Nodes need no API call; the next status change brings the Node back
      }
      const period = options.nodeMonitorPeriodMs;
      const lookup = await options.directory.lookup(
        { id: plan.serverId },
        { maxAgeMs: period, priority: 'urgent', signal },
      );
      const state: ServerState =
        lookup.state === 'exists'
          ? { state: 'exists', status: lookup.server.status }
          : lookup.state === 'gone'
            ? { state: 'gone' }
            : { state: 'unknown', reason: lookup.reason };
      const action = decideLifecycle(node, state);
      switch (action.kind) {
        case 'retry':
          log.debug('server state unknown; not acting', { reason: action.reason });
          return { requeueAfterMs: lookup.state === 'unknown' ? lookup.retryAfterMs : period };
        case 'add-shutdown-taint':
          await patchNodeRetryingConflicts(
            options.nodes,
            node,
            (fresh) =>
              hasTaint(fresh, SHUTDOWN_TAINT) || planLifecycle(fresh).kind !== 'needs-server'
                ? undefined
                : {
                    spec: {
                      taints: [...(fresh.spec?.taints ?? []), { key: SHUTDOWN_TAINT, effect: 'NoSchedule' }],
                    },
                  },
            signal,
          );
          log.info('server is off: Node tainted as shut down', { serverId: plan.serverId });
          break;
        case 'delete-node': {
          const note = `Deleting Node ${nodeName(node)} because its server ${plan.serverId} does not exist in Hetzner Cloud (GET /servers/${plan.serverId}: 404 not_found)`;
          options.recorder.event(nodeRef(node), {
            type: 'Normal',
            reason: 'DeletingNode',
            action: 'DeleteNode',
            note,
          });
          log.info('server gone: deleting Node', { serverId: plan.serverId });
          // Preconditions: never delete a re-created Node of the same name, nor one that changed (e.g.
          // became Ready) since it was judged; a 409 requeues it for a fresh decision.
          const uid = node.metadata?.uid;
          const resourceVersion = node.metadata?.resourceVersion;
          await options.nodes.delete(
            nodeName(node),
            { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) },
            signal,
          );
          return;
        }
        case 'remove-shutdown-taint':
        case 'none':
          break;
      }
      return {
        requeueAfterMs:
          lookup.state === 'unknown' ? lookup.retryAfterMs : untilExpiry(lookup.fetchedAt, period),
      };
    },
  });

  return [nodeController, lifecycleController];
}

async function removeTaint(
  nodes: NodeApi,
  node: Node,
  key: string,
  signal: AbortSignal,
  log: Logger,
): Promise<void> {
  await patchNodeRetryingConflicts(
    nodes,
    node,
    (fresh) =>
      hasTaint(fresh, key)
        ? { spec: { taints: (fresh.spec?.taints ?? []).filter((t) => t.key !== key) } }
        : undefined,
    signal,
  );
  log.info('taint removed', { taint: key });
}

/**
 * How old data may be to find a Node's server by name: taken after the Node was created, and within one
 * monitor period. A server deleted and re-created under the same name (a replaced machine registering
 * its Node again) would otherwise be matched to the old server from an earlier listing: the Node would
 * get the old id and addresses, and the lifecycle controller would then delete it as gone. Names are
 * unique in a project and a Node's server exists before the Node registers, so data from after the
 * Node's creation names the right server. `creationTimestamp` has whole seconds (hence + 1 s) and comes
 * from the API server's clock: a skew of this process's clock widens or narrows the window by as much.
 */
function nameLookupMaxAgeMs(node: Node, periodMs: number, now: number): number {
  const created = Date.parse(node.metadata?.creationTimestamp ?? '');
  return Number.isNaN(created) ? periodMs : Math.min(periodMs, now - (created + 1000));
}

/** Initialisation of Nodes carrying the uninitialized taint, with a growing retry delay per Node. */
class Initialiser {
  readonly #options: CloudNodeControllerOptions;
  readonly #failures = new Map<string, number>();

  constructor(options: CloudNodeControllerOptions) {
    this.#options = options;
  }

  forget(name: string): void {
    this.#failures.delete(name);
  }

  /** Records a failure: a Warning Event naming the cause, and the delay before the next attempt. */
  #fail(node: Node, reason: string, note: string, log: Logger): { requeueAfterMs: number } {
    const name = nodeName(node);
    const failures = (this.#failures.get(name) ?? 0) + 1;
    this.#failures.set(name, failures);
    const requeueAfterMs = Math.min(
      MAX_INIT_RETRY_MS,
      (this.#options.initRetryMs ?? 30_000) * 2 ** (failures - 1),
    );
    log.warn('cannot initialise Node', { reason, note, retryInMs: requeueAfterMs });
    this.#options.recorder.event(nodeRef(node), {
      type: 'Warning',
      reason,
      action: 'InitializeNode',
      note: `${note}; the Node keeps the ${UNINITIALIZED_TAINT} taint`,
    });
    return { requeueAfterMs };
  }

  async initialise(
    node: Node,
    log: Logger,
    signal: AbortSignal,
  ): Promise<{ requeueAfterMs: number } | undefined> {
    const options = this.#options;
    const name = nodeName(node);
    const providerId = parseProviderId(node.spec?.providerID);
    const ref = providerId.kind === 'hcloud' ? { id: providerId.serverId } : { name };
    // By id, any snapshot holding the server will do: ids are never reused, and labels and addresses do
    // not go stale in seconds. By name, see nameLookupMaxAgeMs. A miss is re-checked with one direct
    // request, never answered from an older listing.
    const lookup = await options.directory.lookup(ref, {
      maxAgeMs:
        'id' in ref
          ? Number.POSITIVE_INFINITY
          : nameLookupMaxAgeMs(node, options.nodeMonitorPeriodMs, (options.now ?? Date.now)()),
      priority: 'urgent',
      signal,
    });
    if (lookup.state === 'unknown') {
      log.info('initialisation postponed', { reason: lookup.reason, retryAfterMs: lookup.retryAfterMs });
      // A failing API (revoked token, outage) is named on the Node; waiting for the budget is routine.
      if (lookup.cause === 'api-error')
        options.recorder.event(nodeRef(node), {
          type: 'Warning',
          reason: HCLOUD_API_ERROR_REASON,
          action: 'InitializeNode',
          note: `cannot look up the Hetzner Cloud server: ${lookup.reason}; the Node keeps the ${UNINITIALIZED_TAINT} taint`,
        });
      return { requeueAfterMs: lookup.retryAfterMs };
    }
    if (lookup.state === 'gone') {
      const what =
        'id' in ref
          ? `with id ${ref.id} (providerID ${node.spec?.providerID ?? ''})`
          : `named "${name}" (the Node has no providerID, so it is matched by name)`;
      return this.#fail(node, 'ServerNotFound', `no Hetzner Cloud server ${what}`, log);
    }
    const server = lookup.server;
    const computed = applyProvidedNodeIp(
      serverAddresses(server, { family: options.addressFamily, networkId: options.networkId }),
      node.metadata?.annotations?.[PROVIDED_NODE_IP_ANNOTATION],
    );
    if (!computed.ok) return this.#fail(node, 'ProvidedNodeIPNotFound', computed.reason, log);

    const labels = serverLabels(server, { zoneLabels: options.zoneLabels });
    const providerID = formatProviderId(server.id);
    const patched = await patchNodeRetryingConflicts(
      options.nodes,
      node,
      (fresh) => {
        if (!hasTaint(fresh, UNINITIALIZED_TAINT)) return undefined; // initialised meanwhile
        const current = parseProviderId(fresh.spec?.providerID);
        if (current.kind !== 'unset' && !(current.kind === 'hcloud' && current.serverId === server.id))
          return undefined;
        return {
          metadata: { labels },
          spec: {
            ...(current.kind === 'unset' ? { providerID } : {}),
            taints: (fresh.spec?.taints ?? []).filter((t) => t.key !== UNINITIALIZED_TAINT),
          },
        };
      },
      signal,
    );
    if (patched === undefined) return undefined;
    await options.nodes.patchStatus(name, { status: { addresses: computed.addresses } }, signal);
    this.#failures.delete(name);
    const where = [server.server_type?.name, server.location?.name].filter(Boolean).join(' in ');
    options.recorder.event(nodeRef(node), {
      type: 'Normal',
      reason: 'Synced',
      action: 'InitializeNode',
      note: `Node initialised from Hetzner Cloud server ${server.name} (${providerID}${where ? `, ${where}` : ''})`,
    });
    log.info('Node initialised', { serverId: server.id, providerID, addresses: computed.addresses.length });
    return { requeueAfterMs: options.nodeStatusUpdateFrequencyMs };
  }
}
