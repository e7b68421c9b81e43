/**
 * The pod calls the reconciler makes, behind an interface so the reconcile flow reads as business
 * logic. All go through the Manager's `KubeClient` (client-side rate limit, REST metrics, pooled
 * connections). The At's status is written through the runtime (`ReconcileRequest.status`), which
 * remembers each write.
 */
import { isConflict, isNotFound, type KubeClient } from '@loopwright/runtime';
import { encodePod } from './pod-protobuf.ts';
import { AT_OUTCOME_FINALIZER, POD_RESOURCE, type Pod } from './resource.ts';

/** Who makes this controller's writes, for the API server's field ownership. */
export const FIELD_MANAGER = 'at-scheduler';

export interface AtApi {
  /**
   * Creates the pod in its own namespace; rejects with AlreadyExists when the name is taken. Sent at `critical` priority: it completes a
   * recorded claim, so it never queues behind other Ats' claims at the client's rate limiter. Sent in
   * protobuf, as client-go sends pods, and its answer is not read (the pod's events reach the cache):
   * the API server spends about a tenth less CPU on it than on the same pod in JSON (bench/pod-create).
   */
  createPod(pod: Pod, signal?: AbortSignal): Promise<void>;
  /** A live read (not the cache); undefined when there is no such pod. */
  getPod(namespace: string, name: string, signal?: AbortSignal): Promise<Pod | undefined>;
  /** Deletes the pod if it is still the one with `uid`; a pod already gone is fine. */
  deletePod(namespace: string, name: string, uid: string, signal?: AbortSignal): Promise<void>;
  /**
   * Removes the outcome finalizer from the pod `uid`, whose `finalizers` were last seen as given (a JSON
   * patch that tests both, so it removes no one else's finalizer and never another pod's); a pod
   * already gone is fine. Rejects with 422 when the pod's finalizers changed since: the newer pod's
   * event decides again.
   */
  releasePod(
    pod: { namespace: string; name: string; uid: string; finalizers: readonly string[] },
    signal?: AbortSignal,
  ): Promise<void>;
}

export function kubeAtApi(client: KubeClient): AtApi {
  const pods = client.resource<Pod>(POD_RESOURCE, { protobuf: { encode: encodePod } });
  return {
    createPod: async (pod, signal) => {
      await pods.create(pod, {
        encoding: 'protobuf',
        answer: 'none',
        priority: 'critical',
        fieldManager: FIELD_MANAGER,
        ...(signal ? { signal } : {}),
      });
    },
    getPod: (namespace, name, signal) => pods.getOptional({ namespace, name }, signal ? { signal } : {}),
    deletePod: async (namespace, name, uid, signal) => {
      try {
        // false: the pod is gone already, which is what the delete is for.
        await pods.delete({ namespace, name }, { preconditions: { uid }, ...(signal ? { signal } : {}) });
      } catch (error) {
        // Conflict: the uid precondition failed, the name now belongs to another pod: not ours to delete.
        if (!isConflict(error)) throw error;
      }
    },
    releasePod: async ({ namespace, name, uid, finalizers }, signal) => {
      const path = `/metadata/finalizers/${finalizers.indexOf(AT_OUTCOME_FINALIZER)}`;
      try {
        await pods.patch(
          { namespace, name },
          {
            json: [
              { op: 'test', path: '/metadata/uid', value: uid },
              { op: 'test', path, value: AT_OUTCOME_FINALIZER },
              { op: 'remove', path },
            ],
          },
          { fieldManager: FIELD_MANAGER, ...(signal ? { signal } : {}) },
        );
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
  };
}
