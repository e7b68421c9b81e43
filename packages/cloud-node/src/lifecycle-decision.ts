/**
 * The Node lifecycle controller's decision table, as a pure function (k8s.io/cloud-provider's
 * `CloudNodeLifecycleController`, plus this project's safety rules).
 *
 * | Node                                         | server                 | action                    |
 * | -------------------------------------------- | ---------------------- | ------------------------- |
 * | providerID foreign, Robot or malformed       | (not looked up)        | none, ever                |
 * | providerID unset or uninitialized taint      | (not looked up)        | none (initialisation's)   |
 * | Ready=True, shutdown taint                   | (not looked up)        | remove the shutdown taint |
 * | Ready=True, no shutdown taint                | (not looked up)        | none                      |
 * | Ready=False/Unknown                          | exists, `off`          | add the shutdown taint    |
 * | Ready=False/Unknown                          | exists, other status   | none                      |
 * | Ready=False/Unknown                          | confirmed gone (404)   | delete the Node           |
 * | Ready=False/Unknown                          | unknown (any error)    | none; retry later         |
 *
 * "Confirmed gone" only ever comes from the API's own 404 `not_found` on `GET /servers/{id}`; a 5xx,
 * timeout, 401, 429 or a listing that merely lacks the server are "unknown", so they can never delete.
 */
import type { ServerStatus } from '@loopwright/hcloud';
import { SHUTDOWN_TAINT, UNINITIALIZED_TAINT } from './names.ts';
import { hasTaint, readyStatus, type Node } from './node.ts';
import { parseProviderId } from './provider-id.ts';

export type ServerState =
  { state: 'exists'; status: ServerStatus } | { state: 'gone' } | { state: 'unknown'; reason: string };

/** What the controller needs before it can decide. */
export type LifecyclePlan =
  | { kind: 'ignore'; reason: string }
  | { kind: 'node-ready'; hasShutdownTaint: boolean }
  | { kind: 'needs-server'; serverId: number };

export type LifecycleAction =
  | { kind: 'none'; reason: string }
  | { kind: 'remove-shutdown-taint' }
  | { kind: 'add-shutdown-taint' }
  | { kind: 'delete-node' }
  | { kind: 'retry'; reason: string };

export function planLifecycle(node: Node): LifecyclePlan {
  const providerId = parseProviderId(node.spec?.providerID);
  switch (providerId.kind) {
    case 'foreign':
      return { kind: 'ignore', reason: `providerID ${providerId.raw} is not a Hetzner Cloud server` };
    case 'robot':
      return { kind: 'ignore', reason: `providerID ${providerId.raw} is a Robot server` };
    case 'unset':
      return { kind: 'ignore', reason: 'no providerID yet (not initialised)' };
    case 'hcloud':
      break;
  }
  if (hasTaint(node, UNINITIALIZED_TAINT)) return { kind: 'ignore', reason: 'not initialised yet' };
  if (readyStatus(node) === 'True')
    return { kind: 'node-ready', hasShutdownTaint: hasTaint(node, SHUTDOWN_TAINT) };
  return { kind: 'needs-server', serverId: providerId.serverId };
}

export function decideLifecycle(node: Node, server?: ServerState): LifecycleAction {
  const plan = planLifecycle(node);
  if (plan.kind === 'ignore') return { kind: 'none', reason: plan.reason };
  if (plan.kind === 'node-ready')
    return plan.hasShutdownTaint ? { kind: 'remove-shutdown-taint' } : { kind: 'none', reason: 'Ready' };
  if (server === undefined || server.state === 'unknown')
    return { kind: 'retry', reason: server?.reason ?? 'server state not looked up' };
  if (server.state === 'gone') return { kind: 'delete-node' };
  if (server.status === 'off')
    return hasTaint(node, SHUTDOWN_TAINT)
      ? { kind: 'none', reason: 'already tainted as shut down' }
      : { kind: 'add-shutdown-taint' };
  return { kind: 'none', reason: `server is ${server.status}` };
}
