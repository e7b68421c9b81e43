/**
 * What must hold after every fault, once the load is paused and its last requests are due:
 * - every At due ran exactly once: its status is DONE and Succeeded, and exactly one pod was ever made
 *   for it (pods are never deleted during the run, so the pods owned by an At are every pod made for
 *   it). A leader killed between its claim and its create does not excuse a DONE At without a pod:
 *   at-scheduler's pod finalizer lets the next leader know the pod was never created, and create it;
 * - each MailgunCluster got exactly one mail (the peer's record, marked with its uid);
 * - no Node was deleted whose server exists (the suite never deletes a Node itself), each of those
 *   Nodes is initialised, and the Node of every deleted server is gone;
 * - every replica's every synced informer cache equals a fresh LIST of its scope (names and
 *   resourceVersions), read from the replica's cache dump.
 * A count that is too high (two pods, two mails) fails at once: waiting cannot lower it.
 */
import { eventually } from '@loopwright/envtest';
import type { KubeObject, OwnerReference, ResourceType } from '@loopwright/client';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { resource } from '../src/kube.ts';
import { ATS, NODES, PODS } from '../src/resources.ts';
import type { ChaosEnvironment } from './environment.ts';
import { UNINITIALIZED_TAINT } from '../src/kubeletless-node.ts';
import type { Load } from './load.ts';
import { cacheDumpOf, replicasOf, type CachedScope } from './replicas.ts';

/** Raised for a count that can only grow: retrying would only hide it until the timeout. */
class Violation extends Error {}

interface At extends KubeObject {
  metadata: { name: string; uid: string };
  status?: { phase?: string; outcome?: string; reason?: string };
}

interface OwnedPod extends KubeObject {
  metadata: { name: string; ownerReferences?: OwnerReference[] };
}

interface Node extends KubeObject {
  metadata: { name: string };
  spec?: { taints?: { key: string }[] };
}

async function assertAtsRanOnce(env: ChaosEnvironment, load: Load): Promise<void> {
  const namespace = env.work.name;
  const ats = new Map(
    (await resource<At>(env.admin, ATS).list({ namespace })).items.map((at) => [at.metadata.name, at]),
  );
  const pods = (
    await resource<OwnedPod>(env.admin, PODS).list({
      namespace,
      labelSelector: 'app.kubernetes.io/managed-by=at-scheduler',
    })
  ).items;
  const podsPerOwner = new Map<string, number>();
  for (const pod of pods)
    for (const owner of pod.metadata.ownerReferences ?? [])
      if (owner.controller) podsPerOwner.set(owner.uid, (podsPerOwner.get(owner.uid) ?? 0) + 1);
  const pending: string[] = [];
  for (const requested of load.ats) {
    const at = ats.get(requested.name);
    if (!at) throw new Violation(`At ${requested.name} is gone`);
    const count = podsPerOwner.get(at.metadata.uid) ?? 0;
    if (count > 1) throw new Violation(`At ${requested.name} has ${count} pods`);
    // DONE is final: an At that ended without its one pod, or failed, cannot come right by waiting.
    if (at.status?.phase === 'DONE' && (count === 0 || at.status.outcome !== 'Succeeded'))
      throw new Violation(`At ${requested.name} ended ${JSON.stringify(at.status)} with ${count} pods`);
    if (count === 0 || at.status?.phase !== 'DONE')
      pending.push(`${requested.name} ${JSON.stringify(at.status)}`);
  }
  assert.deepEqual(pending, [], `${pending.length} Ats not done`);
}

function assertOneMailEach(env: ChaosEnvironment, load: Load): void {
  const mails = new Map<string, number>();
  for (const mail of env.mailgun.accepted()) {
    const uid = mail.userVariables['loopwright-uid'] ?? '';
    mails.set(uid, (mails.get(uid) ?? 0) + 1);
  }
  const unsent: string[] = [];
  for (const [name, uid] of load.clusters) {
    const count = mails.get(uid) ?? 0;
    if (count > 1) throw new Violation(`MailgunCluster ${name} got ${count} mails`);
    if (count === 0) unsent.push(name);
  }
  assert.deepEqual(unsent, [], `${unsent.length} MailgunClusters without a mail`);
}

function isUninitialised(node: Node): boolean {
  return node.spec?.taints?.some((taint) => taint.key === UNINITIALIZED_TAINT) ?? false;
}

async function assertNodesFollowServers(env: ChaosEnvironment, load: Load): Promise<void> {
  const nodes = new Map(
    (
      await resource<Node>(env.admin, NODES).list({
        labelSelector: `${env.nodeLabel.key}=${env.nodeLabel.value}`,
      })
    ).items.map((node) => [node.metadata.name, node]),
  );
  const waiting: string[] = [];
  for (const machine of load.machines) {
    const node = nodes.get(machine.node);
    if (machine.serverExists) {
      if (!node) throw new Violation(`Node ${machine.node} was deleted, but its server exists`);
      if (isUninitialised(node)) waiting.push(`${machine.node} not initialised`);
    } else if (node && !isUninitialised(node))
      // A Node never initialised has no providerID, and cloud-node never deletes those (its README:
      // HCCM's deletes on a name look-up's miss are its "deleted right after registration" issues).
      waiting.push(`${machine.node} still there, its server deleted`);
  }
  assert.deepEqual(waiting, []);
}

/** `namespace/name` (or `name`) -> resourceVersion of a fresh LIST of the scope. */
async function freshList(env: ChaosEnvironment, scope: CachedScope): Promise<Record<string, string>> {
  const type: ResourceType = {
    group: scope.group,
    version: scope.version,
    plural: scope.plural,
    kind: '',
    // A list over all namespaces has the path of a cluster-scoped resource's.
    namespaced: scope.namespace !== undefined,
  };
  const { items } = await resource(env.admin, type).list({
    ...(scope.namespace === undefined ? {} : { namespace: scope.namespace }),
    ...(scope.labelSelector === undefined ? {} : { labelSelector: scope.labelSelector }),
    ...(scope.fieldSelector === undefined ? {} : { fieldSelector: scope.fieldSelector }),
  });
  const objects: Record<string, string> = {};
  for (const { metadata } of items) {
    const key = metadata?.namespace ? `${metadata.namespace}/${metadata.name ?? ''}` : (metadata?.name ?? '');
    objects[key] = metadata?.resourceVersion ?? '';
  }
  return objects;
}

/** Every synced informer of every replica of every controller equals a fresh LIST of its scope. */
async function assertCachesEqualLists(env: ChaosEnvironment): Promise<void> {
  for (const controller of env.controllers)
    for (const replica of await replicasOf(env.admin, controller)) {
      if (!replica.ready) throw new Error(`${controller.name} ${replica.name} is not Ready`);
      const scopes = await cacheDumpOf(replica);
      assert.ok(scopes.length > 0, `${replica.name} dumps no informer`);
      for (const scope of scopes) {
        const what = `${replica.name}: ${scope.plural}.${scope.group} ${scope.namespace ?? '(all)'} ${scope.labelSelector ?? ''}`;
        assert.ok(scope.synced, `${what} has not synced`);
        const listed = await freshList(env, scope);
        // The LIST is read after the dump: an object that changed in between shows as a difference
        // once, which the retry outlives (the load is paused).
        assert.deepEqual(scope.objects, listed, `${what} differs from a fresh LIST`);
      }
    }
}

/**
 * Waits until every invariant holds (the load paused first, and its last Ats due). A count that is too
 * high, or an At ended wrongly, fails at once.
 */
export async function invariantsHold(env: ChaosEnvironment, load: Load, timeoutMs = 180_000): Promise<void> {
  const lastDue = Math.max(0, ...load.ats.map((at) => at.schedule));
  await sleep(Math.max(0, lastDue - Date.now()));
  let violation: Violation | undefined;
  await eventually(
    async () => {
      try {
        await assertAtsRanOnce(env, load);
        assertOneMailEach(env, load);
        await assertNodesFollowServers(env, load);
        await assertCachesEqualLists(env);
      } catch (error) {
        if (error instanceof Violation) violation = error;
        else throw error;
      }
    },
    { timeoutMs, intervalMs: 1000 },
  );
  if (violation) throw violation;
}
