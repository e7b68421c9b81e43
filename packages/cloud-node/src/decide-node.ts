/**
 * The Node controller's decisions, as pure functions: which work a Node needs (initialisation, address
 * refresh, or none), and what a server look-up means for it. The values written (labels, addresses) are
 * `node-mapping.ts`'s, exactly HCCM's.
 *
 * | Node                                             | step                                         |
 * | ------------------------------------------------ | -------------------------------------------- |
 * | providerID foreign, Robot or malformed           | none, ever (tainted or not)                  |
 * | uninitialized taint                              | initialise: look up by providerID, else name |
 * | no taint, `hcloud://<id>`                        | refresh `status.addresses`                   |
 * | no taint, no providerID                          | none (not run with an external provider)     |
 */
import type { Server } from '@loopwright/hcloud';
import { PROVIDED_NODE_IP_ANNOTATION, UNINITIALIZED_TAINT } from './names.ts';
import { hasTaint, nodeName, type Node } from './node.ts';
import {
  applyProvidedNodeIp,
  sameAddresses,
  serverAddresses,
  serverLabels,
  type AddressFamily,
  type NodeAddress,
  type ProvidedIpResult,
} from './node-mapping.ts';
import { formatProviderId, parseProviderId } from './provider-id.ts';
import { EventReason } from './reasons.ts';
import type { Lookup, ServerRef } from './server-directory.ts';

/** How servers map to Node labels and addresses (HCLOUD_INSTANCES_*, HCLOUD_NETWORK). */
export interface NodeMapping {
  addressFamily: AddressFamily;
  /** The resolved id of HCLOUD_NETWORK, if set. */
  networkId: number | undefined;
  zoneLabels: boolean;
}

export type NodeStep =
  | { action: 'none'; reason: string }
  /** Find the server by `ref`, accepting data `maxAgeMs` old, then {@link decideInitialisation}. */
  | { action: 'initialise'; ref: ServerRef; maxAgeMs: number }
  /** Read the server from a snapshot, then {@link decideRefresh}. */
  | { action: 'refresh-addresses'; serverID: number };

/**
 * `monitorPeriodMs` bounds how old data may be to find a server by name; `now` is Unix ms (compared with
 * the Node's creationTimestamp).
 */
export function decideNode(node: Node, options: { monitorPeriodMs: number; now: number }): NodeStep {
  const providerId = parseProviderId(node.spec?.providerID);
  if (providerId.kind === 'foreign' || providerId.kind === 'robot')
    return { action: 'none', reason: `providerID ${providerId.raw} is not ours` };
  if (hasTaint(node, UNINITIALIZED_TAINT))
    // By id, any snapshot holding the server will do: ids are never reused, and labels and addresses do
    // not go stale in seconds. By name, see nameLookupMaxAgeMs.
    return providerId.kind === 'hcloud'
      ? { action: 'initialise', ref: { id: providerId.serverID }, maxAgeMs: Number.POSITIVE_INFINITY }
      : {
          action: 'initialise',
          ref: { name: nodeName(node) },
          maxAgeMs: nameLookupMaxAgeMs(node, options.monitorPeriodMs, options.now),
        };
  if (providerId.kind === 'unset')
    return { action: 'none', reason: 'neither a providerID nor the uninitialized taint' };
  return { action: 'refresh-addresses', serverID: providerId.serverID };
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

export type InitialisationStep =
  /** No answer now: look again after `retryAfterMs`; `warning` (an Event note) when the API failed. */
  | { action: 'wait'; retryAfterMs: number; reason: string; warning?: string }
  /** Cannot initialise from what the API said: a Warning Event, and a retry with backoff. */
  | {
      action: 'fail';
      reason: typeof EventReason.ServerNotFound | typeof EventReason.ProvidedNodeIPNotFound;
      note: string;
    }
  | {
      action: 'initialise';
      server: Server;
      providerID: string;
      labels: Record<string, string>;
      addresses: NodeAddress[];
    };

const keepsTaint = `the Node keeps the ${UNINITIALIZED_TAINT} taint`;

/** What the look-up of a tainted Node's server (by `ref`) means for its initialisation. */
export function decideInitialisation(
  node: Node,
  ref: ServerRef,
  lookup: Lookup,
  mapping: NodeMapping,
): InitialisationStep {
  if (lookup.state === 'unknown') {
    const { retryAfterMs, reason } = lookup;
    // A failing API (revoked token, outage) is named on the Node; waiting for the budget is routine.
    return lookup.cause === 'api-error'
      ? {
          action: 'wait',
          retryAfterMs,
          reason,
          warning: `cannot look up the Hetzner Cloud server: ${reason}; ${keepsTaint}`,
        }
      : { action: 'wait', retryAfterMs, reason };
  }
  if (lookup.state === 'gone') {
    const what =
      'id' in ref
        ? `with id ${ref.id} (providerID ${node.spec?.providerID ?? ''})`
        : `named "${ref.name}" (the Node has no providerID, so it is matched by name)`;
    return {
      action: 'fail',
      reason: EventReason.ServerNotFound,
      note: `no Hetzner Cloud server ${what}; ${keepsTaint}`,
    };
  }
  const { server } = lookup;
  const computed = addressesOf(node, server, mapping);
  if (!computed.ok)
    return {
      action: 'fail',
      reason: EventReason.ProvidedNodeIPNotFound,
      note: `${computed.reason}; ${keepsTaint}`,
    };
  return {
    action: 'initialise',
    server,
    providerID: formatProviderId(server.id),
    labels: serverLabels(server, { zoneLabels: mapping.zoneLabels }),
    addresses: computed.addresses,
  };
}

/**
 * The merge patch that initialises `node` (the cached Node, or after a conflict a fresh read): the
 * providerID (only if unset), the labels, and the taints without the uninitialized one. `undefined` when
 * that Node needs none after all: it was initialised meanwhile (another replica during a leadership
 * hand-over, a person), or its providerID now names another server (its next event decides afresh).
 */
export function initialisationPatch(
  node: Node,
  step: Pick<Extract<InitialisationStep, { action: 'initialise' }>, 'server' | 'providerID' | 'labels'>,
): Record<string, unknown> | undefined {
  if (!hasTaint(node, UNINITIALIZED_TAINT)) return undefined;
  const current = parseProviderId(node.spec?.providerID);
  if (current.kind !== 'unset' && !(current.kind === 'hcloud' && current.serverID === step.server.id))
    return undefined;
  return {
    metadata: { labels: step.labels },
    spec: {
      ...(current.kind === 'unset' ? { providerID: step.providerID } : {}),
      taints: (node.spec?.taints ?? []).filter((t) => t.key !== UNINITIALIZED_TAINT),
    },
  };
}

export type RefreshStep =
  | { action: 'none'; reason: string }
  /** The addresses cannot be computed (provided-node-ip): a Warning Event, the addresses stay. */
  | { action: 'warn'; note: string }
  | { action: 'update-addresses'; addresses: NodeAddress[] };

/** What an initialised Node's `status.addresses` need, given its server in the latest snapshot. */
export function decideRefresh(node: Node, server: Server | undefined, mapping: NodeMapping): RefreshStep {
  // Missing from a listing is no proof of anything: the lifecycle controller confirms and decides.
  if (server === undefined) return { action: 'none', reason: 'server not in the snapshot' };
  const computed = addressesOf(node, server, mapping);
  if (!computed.ok) return { action: 'warn', note: computed.reason };
  if (sameAddresses(node.status?.addresses, computed.addresses))
    return { action: 'none', reason: 'addresses unchanged' };
  return { action: 'update-addresses', addresses: computed.addresses };
}

function addressesOf(node: Node, server: Server, mapping: NodeMapping): ProvidedIpResult {
  return applyProvidedNodeIp(
    serverAddresses(server, { family: mapping.addressFamily, networkId: mapping.networkId }),
    node.metadata?.annotations?.[PROVIDED_NODE_IP_ANNOTATION],
  );
}
