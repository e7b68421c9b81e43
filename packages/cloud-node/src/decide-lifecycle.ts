/**
 * The Node lifecycle controller's decision table, as a pure function (k8s.io/cloud-provider's
 * `CloudNodeLifecycleController`, plus this project's safety rules).
 *
 * | Node                                         | server                 | step                      |
 * | -------------------------------------------- | ---------------------- | ------------------------- |
 * | providerID foreign, Robot or malformed       | (not looked up)        | none, ever                |
 * | providerID unset or uninitialized taint      | (not looked up)        | none (initialisation's)   |
 * | Ready=True, shutdown taint                   | (not looked up)        | remove the shutdown taint |
 * | Ready=True, no shutdown taint                | (not looked up)        | none                      |
 * | Ready=False/Unknown                          | not looked up yet      | look the server up        |
 * | Ready=False/Unknown                          | exists, `off`          | add the shutdown taint    |
 * | Ready=False/Unknown                          | exists, other status   | none                      |
 * | Ready=False/Unknown                          | confirmed gone (404)   | delete the Node           |
 * | Ready=False/Unknown                          | unknown (any error)    | retry later               |
 *
 * "Confirmed gone" only ever comes from the API's own 404 `not_found` on `GET /servers/{id}` (see
 * `ServerDirectory`); a 5xx, timeout, 401, 429, a budget wait or a listing that merely lacks the server
 * are "unknown", so they can never delete.
 *
 * How old the looked-up data may be is {@link notReadyDataMaxAgeMs}: what keeps many NotReady Nodes
 * within the API budget.
 */
import type { Server } from '@loopwright/hcloud';
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from './names.ts';
import { hasTaint, readyStatus, type Node } from './node.ts';
import { parseProviderId } from './provider-id.ts';

/** What a server lookup said (a `ServerDirectory` `Lookup` is one). */
export type ServerState =
  | { state: 'exists'; server: Pick<Server, 'status'> }
  | { state: 'gone' }
  | { state: 'unknown'; reason: string };

export type LifecycleStep =
  /** Nothing to do; only a change of the Node can change that (or, after a look-up, the next one). */
  | { action: 'none'; reason: string }
  | { action: 'remove-shutdown-taint' }
  /** The decision depends on the server: decide again with what the look-up says. */
  | { action: 'look-up-server'; serverID: number }
  | { action: 'add-shutdown-taint'; serverID: number }
  | { action: 'delete-node'; serverID: number }
  /** The server's state is unknown: act on nothing, look again later. */
  | { action: 'retry'; reason: string };

/** The step for `node`, given what the look-up of its server said (`undefined`: not looked up yet). */
export function decideLifecycle(node: Node, server?: ServerState): LifecycleStep {
  const providerId = parseProviderId(node.spec?.providerID);
  switch (providerId.kind) {
    case 'foreign':
      return { action: 'none', reason: `providerID ${providerId.raw} is not a Hetzner Cloud server` };
    case 'robot':
      return { action: 'none', reason: `providerID ${providerId.raw} is a Robot server` };
    case 'unset':
      return { action: 'none', reason: 'no providerID yet (not initialised)' };
    case 'hcloud':
      break;
  }
  if (hasTaint(node, UNINITIALIZED_TAINT)) return { action: 'none', reason: 'not initialised yet' };
  if (readyStatus(node) === 'True')
    return hasTaint(node, SHUTDOWN_TAINT)
      ? { action: 'remove-shutdown-taint' }
      : { action: 'none', reason: 'Ready' };
  const serverID = providerId.serverID;
  if (server === undefined) return { action: 'look-up-server', serverID };
  switch (server.state) {
    case 'unknown':
      return { action: 'retry', reason: server.reason };
    case 'gone':
      return { action: 'delete-node', serverID };
    case 'exists':
      if (server.server.status !== 'off')
        return { action: 'none', reason: `server is ${server.server.status}` };
      return hasTaint(node, SHUTDOWN_TAINT)
        ? { action: 'none', reason: 'already tainted as shut down' }
        : { action: 'add-shutdown-taint', serverID };
  }
}

/** What checking the NotReady Nodes costs, and the two paces they may be checked at. */
export interface NotReadyDemand {
  /** NotReady Nodes being checked against their server (this one included). */
  notReady: number;
  /** Requests one full sweep of the project's servers costs (its pages). */
  sweepPages: number;
  /** HCCM's `--node-monitor-period`: how often each NotReady Node is checked when that is affordable. */
  monitorPeriodMs: number;
  /** The slowest pace: one sweep (or fewer single lookups) serves all NotReady Nodes once per this period. */
  sweepPeriodMs: number;
}

/**
 * How old the server data a NotReady Node is decided on may be (its next check comes when it expires).
 * HCCM checks every Node each monitor period; for many NotReady Nodes (a CNI outage) that is a sweep of
 * all servers every 5 s, most of the project's budget for as long as the outage lasts. So each NotReady
 * Node is checked every monitor period only while checking all of them that often, one single lookup
 * each, costs no more than one sweep per sweep period; otherwise every sweep period, where one shared
 * sweep (or, for fewer Nodes than it has pages, one single lookup each) serves them all. Either way the
 * NotReady Nodes together cost at most one sweep per sweep period, however many they are.
 */
export function notReadyDataMaxAgeMs(demand: NotReadyDemand): number {
  const { notReady, sweepPages, monitorPeriodMs, sweepPeriodMs } = demand;
  const singleLookupsPerSweepPeriod = (notReady * sweepPeriodMs) / monitorPeriodMs;
  // A monitor period longer than the sweep period is cheaper already: kept.
  return singleLookupsPerSweepPeriod <= sweepPages
    ? monitorPeriodMs
    : Math.max(monitorPeriodMs, sweepPeriodMs);
}
