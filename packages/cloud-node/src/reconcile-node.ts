/**
 * The Node controller's reconcile: performs what `decide-node.ts` chose through the {@link NodeApi}.
 *
 * - Initialisation (the uninitialized taint): look the server up (urgent), then one merge patch of
 *   providerID, labels and taints (retried on conflict from a fresh read), the addresses through
 *   `nodes/status`, a `Synced` Event. A server that cannot be found, or a provided-node-ip it does not
 *   have, is a Warning Event and a retry after 30 s doubling to 5 min per Node; a failing API is a
 *   Warning Event and a retry when the directory's back-off ends.
 * - Address refresh (initialised Nodes): read the shared snapshot (non-urgent: the budget may stretch
 *   it), write `status.addresses` only when they changed, requeue for the moment the snapshot expires.
 *   All Nodes that read one snapshot come back together: the first triggers the next sweep
 *   (single-flight), the rest read it, one sweep per period however many Nodes there are.
 */
import { Backoff, type BackoffOptions } from '@loopwright/core';
import type { ReconcileResult, Reconciler } from '@loopwright/runtime';
import type { Logger } from 'winston';
import type { NodeApi } from './api.ts';
import {
  decideInitialisation,
  decideNode,
  decideRefresh,
  initialisationPatch,
  type NodeMapping,
} from './decide-node.ts';
import { nodeName, type Node } from './node.ts';
import { EventReason } from './reasons.ts';
import { patchNodeFromLatest } from './patch-node.ts';
import type { ServerRef } from './server-directory.ts';

export interface NodeReconcilerOptions extends NodeMapping {
  api: NodeApi;
  /** How old data may be to find an uninitialised Node's server by name. */
  nodeMonitorPeriodMs: number;
  /** How often initialised Nodes get their addresses refreshed. */
  nodeStatusUpdateFrequencyMs: number;
  /** Unix ms. Default `Date.now`. */
  now?: () => number;
  /** First retry delay after a failed initialisation (doubling up to 5 min). Default 30 s. */
  initRetryMs?: number;
}

const MAX_INIT_RETRY_MS = 300_000;

export function createNodeReconciler(options: NodeReconcilerOptions): Reconciler<Node> {
  const { api } = options;
  const now = options.now ?? Date.now;
  const initRetryMs = options.initRetryMs ?? 30_000;
  // min(): the first delay too stays within the cap.
  const initRetry: BackoffOptions = {
    durationMs: Math.min(initRetryMs, MAX_INIT_RETRY_MS),
    factor: 2,
    steps: Infinity,
    capMs: MAX_INIT_RETRY_MS,
  };
  /** Per Node name, while its initialisation keeps failing. */
  const retries = new Map<string, Backoff>();

  /** A failure the API answered: a Warning Event naming the cause, and the Node's next retry delay. */
  const fail = (node: Node, reason: string, note: string, log: Logger): ReconcileResult => {
    const name = nodeName(node);
    const backoff = retries.get(name) ?? new Backoff(initRetry);
    retries.set(name, backoff);
    const retryAfterMs = backoff.step();
    log.warn('cannot initialise Node', { action: 'initialise', reason, note, retryAfterMs });
    api.recordEvent(node, { type: 'Warning', reason, action: 'InitializeNode', note });
    return { requeueAfterMs: retryAfterMs };
  };

  const initialise = async (
    node: Node,
    ref: ServerRef,
    maxAgeMs: number,
    log: Logger,
    signal: AbortSignal,
  ): Promise<ReconcileResult> => {
    const lookup = await api.lookupServer(ref, { maxAgeMs, priority: 'urgent', signal });
    const step = decideInitialisation(node, ref, lookup, options);
    if (step.action === 'wait') {
      log.info('initialisation postponed', { reason: step.reason, retryAfterMs: step.retryAfterMs });
      if (step.warning !== undefined)
        api.recordEvent(node, {
          type: 'Warning',
          reason: EventReason.HcloudAPIError,
          action: 'InitializeNode',
          note: step.warning,
        });
      return { requeueAfterMs: step.retryAfterMs };
    }
    if (step.action === 'fail') return fail(node, step.reason, step.note, log);

    const name = nodeName(node);
    const patched = await patchNodeFromLatest(api, node, (fresh) => initialisationPatch(fresh, step), signal);
    if (patched === undefined) {
      log.debug('Node needs no initialisation after all', { serverID: step.server.id });
      return undefined;
    }
    await api.patchNodeStatus(name, { status: { addresses: step.addresses } }, signal);
    retries.delete(name);
    const { server, providerID } = step;
    const where = [server.server_type?.name, server.location?.name].filter(Boolean).join(' in ');
    api.recordEvent(node, {
      type: 'Normal',
      reason: EventReason.Synced,
      action: 'InitializeNode',
      note: `Node initialised from Hetzner Cloud server ${server.name} (${providerID}${where ? `, ${where}` : ''})`,
    });
    log.info('Node initialised', {
      action: 'initialise',
      serverID: server.id,
      providerID,
      addresses: step.addresses.length,
    });
    return { requeueAfterMs: options.nodeStatusUpdateFrequencyMs };
  };

  const refreshAddresses = async (
    node: Node,
    serverID: number,
    log: Logger,
    signal: AbortSignal,
  ): Promise<ReconcileResult> => {
    const period = options.nodeStatusUpdateFrequencyMs;
    const result = await api.serverSnapshot({ maxAgeMs: period, priority: 'refresh', signal });
    if (!result.ok) {
      log.debug('address refresh postponed', { reason: result.reason, retryAfterMs: result.retryAfterMs });
      return { requeueAfterMs: result.retryAfterMs };
    }
    const step = decideRefresh(node, result.snapshot.byId.get(serverID), options);
    switch (step.action) {
      case 'warn':
        log.warn('cannot refresh addresses', { action: 'update-addresses', serverID, note: step.note });
        api.recordEvent(node, {
          type: 'Warning',
          reason: EventReason.AddressesNotUpdated,
          action: 'UpdateAddresses',
          note: step.note,
        });
        break;
      case 'update-addresses':
        await api.patchNodeStatus(nodeName(node), { status: { addresses: step.addresses } }, signal);
        log.info('addresses updated', {
          action: 'update-addresses',
          serverID,
          addresses: step.addresses.map((a) => `${a.type}=${a.address}`).join(' '),
        });
        break;
      case 'none':
        break;
    }
    // +1: come back once the snapshot is older than the period, so that the next read takes a new one.
    return { requeueAfterMs: Math.max(1, result.snapshot.takenAt + period - now() + 1) };
  };

  return async ({ object: node, name, log, signal }) => {
    if (node === undefined) {
      // Deleted: a Node registered again under this name starts with the first retry delay.
      retries.delete(name);
      return undefined;
    }
    const step = decideNode(node, { monitorPeriodMs: options.nodeMonitorPeriodMs, now: now() });
    switch (step.action) {
      case 'none':
        return undefined;
      case 'initialise':
        return initialise(node, step.ref, step.maxAgeMs, log, signal);
      case 'refresh-addresses':
        return refreshAddresses(node, step.serverID, log, signal);
    }
  };
}
