/**
 * The Node lifecycle controller's reconcile: performs what `decide-lifecycle.ts` chose through the
 * {@link NodeApi}. Ready Nodes cost no API call (their next status change brings them back); NotReady
 * ones are looked up (urgent, through the shared directory) every `nodeMonitorPeriodMs`, or every
 * `notReadySweepPeriodMs` when so many are NotReady that the former would cost more than one sweep of all
 * servers per the latter (`notReadyDataMaxAgeMs`); tainted when their server is off, deleted when it is
 * confirmed gone, and left alone while its state is unknown.
 */
import type { Reconciler } from '@loopwright/runtime';
import type { NodeApi } from './api.ts';
import { decideLifecycle, notReadyDataMaxAgeMs } from './decide-lifecycle.ts';
import { SHUTDOWN_TAINT } from './names.ts';
import { nodeName, type Node } from './node.ts';
import { EventReason } from './reasons.ts';
import { patchNodeFromLatest } from './patch-node.ts';

export interface LifecycleReconcilerOptions {
  api: NodeApi;
  /** How often NotReady Nodes are checked against their server, while affordable (HCCM's). */
  nodeMonitorPeriodMs: number;
  /**
   * How often NotReady Nodes are checked when there are too many to check each monitor period: one sweep
   * per this period serves them all. Default 55 s: a deleted server's Node goes within a minute, the
   * sweep, the confirmation by id and the delete included.
   */
  notReadySweepPeriodMs?: number;
  /** Unix ms. Default `Date.now`. */
  now?: () => number;
}

export function createLifecycleReconciler(options: LifecycleReconcilerOptions): Reconciler<Node> {
  const { api } = options;
  const now = options.now ?? Date.now;
  const monitorPeriodMs = options.nodeMonitorPeriodMs;
  const sweepPeriodMs = options.notReadySweepPeriodMs ?? 55_000;
  // The Nodes whose last reconcile looked their server up: every change of a Node's decision and its
  // deletion reconcile it (the controller's predicate), so this is exactly the NotReady Nodes being checked.
  const checked = new Set<string>();

  return async ({ name, object: node, log, signal }) => {
    if (node === undefined) {
      checked.delete(name);
      return undefined; // deleted: nothing left to decide about
    }
    const first = decideLifecycle(node);
    if (first.action === 'look-up-server') checked.add(name);
    else checked.delete(name);
    if (first.action === 'remove-shutdown-taint') {
      // Decided again on a fresh read after a conflict: a Node NotReady again keeps its taint.
      const patched = await patchNodeFromLatest(
        api,
        node,
        (fresh) =>
          decideLifecycle(fresh).action === 'remove-shutdown-taint'
            ? { spec: { taints: (fresh.spec?.taints ?? []).filter((t) => t.key !== SHUTDOWN_TAINT) } }
            : undefined,
        signal,
      );
      if (patched) log.info('Node Ready: shutdown taint removed', { action: first.action });
      return undefined;
    }
    if (first.action !== 'look-up-server') return undefined; // Ready, or not ours: Node events bring it back

    const { serverID } = first;
    const maxAgeMs = notReadyDataMaxAgeMs({
      notReady: checked.size,
      sweepPages: api.sweepPages(),
      monitorPeriodMs,
      sweepPeriodMs,
    });
    const lookup = await api.lookupServer({ id: serverID }, { maxAgeMs, priority: 'urgent', signal });
    const step = decideLifecycle(node, lookup);
    if (step.action === 'delete-node') {
      api.recordEvent(node, {
        type: 'Normal',
        reason: EventReason.DeletingNode,
        action: 'DeleteNode',
        note: `Deleting Node ${nodeName(node)} because its server ${serverID} does not exist in Hetzner Cloud (GET /servers/${serverID}: 404 not_found)`,
      });
      log.info('server gone: deleting Node', { action: step.action, serverID });
      // Preconditions: never delete a re-created Node of the same name, nor one that changed (e.g.
      // became Ready) since it was judged; the 409 is an error, so the Node is decided again.
      const uid = node.metadata?.uid;
      const resourceVersion = node.metadata?.resourceVersion;
      await api.deleteNode(
        nodeName(node),
        { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) },
        signal,
      );
      return undefined;
    }
    if (step.action === 'add-shutdown-taint') {
      // Decided again on a fresh read after a conflict: a Node Ready meanwhile is not tainted.
      const patched = await patchNodeFromLatest(
        api,
        node,
        (fresh) =>
          decideLifecycle(fresh, lookup).action === 'add-shutdown-taint'
            ? {
                spec: {
                  taints: [...(fresh.spec?.taints ?? []), { key: SHUTDOWN_TAINT, effect: 'NoSchedule' }],
                },
              }
            : undefined,
        signal,
      );
      if (patched) log.info('server is off: Node tainted as shut down', { action: step.action, serverID });
    } else if (step.action === 'retry') {
      log.debug('server state unknown; not acting', { serverID, reason: step.reason });
    }
    // NotReady Nodes are polled: come back when the data just used expires (+1: then it has), or when
    // the directory can answer again. Nodes that read one sweep thus come back together, and the first
    // of them triggers the next sweep for all.
    return {
      requeueAfterMs:
        lookup.state === 'unknown'
          ? lookup.retryAfterMs
          : Math.max(1, lookup.fetchedAt + maxAgeMs - now() + 1),
    };
  };
}
