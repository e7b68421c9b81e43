/**
 * The At controllers for a Manager: one per watched namespace scope (all namespaces, or each namespace
 * of --watch-namespace), each watching the Ats of its scope and only the pods this controller created
 * (label selector), so the cache never holds the cluster's other pods.
 */
import type { InformerRequest } from '@loopwright/informer';
import { Controller, type EventRecorder, type Manager } from '@loopwright/runtime';
import type { AtApi } from './api.ts';
import type { At } from './generated/types.ts';
import type { AtMetrics } from './metrics.ts';
import { createAtReconciler, type AtReconcilerOptions, type StartObservation } from './reconcile.ts';
import {
  AT_GROUP,
  AT_KIND,
  AT_PLURAL,
  AT_VERSION,
  decodePodFieldsRead,
  keepPodFieldsRead,
  POD_SELECTOR,
  type Pod,
} from './resource.ts';

export interface AtControllerOptions {
  manager: Pick<Manager, 'factory'>;
  api: AtApi;
  recorder: Pick<EventRecorder, 'event'>;
  /** undefined = all namespaces. */
  namespaces: string[] | undefined;
  workers: number;
  defaultImage: string;
  now?: () => number;
  onStart?: (observation: StartObservation) => void;
  /** at-scheduler's own families (metrics.ts); each scope's At cache is counted for the overdue gauge. */
  metrics?: AtMetrics;
  wrapStatusWriter?: AtReconcilerOptions['wrapStatusWriter'];
}

export const CONTROLLER_NAME = 'at-scheduler';

/**
 * The pods one namespace scope caches and watches: only those this controller created, and of them
 * only the fields it reads.
 */
export function podCacheScope(namespace: string | undefined): InformerRequest<Pod> {
  return {
    group: '',
    version: 'v1',
    plural: 'pods',
    labelSelector: POD_SELECTOR,
    transform: keepPodFieldsRead,
    // Its protobuf events are the bytes kube-controller-manager's pod watch already had encoded.
    protobuf: decodePodFieldsRead,
    ...(namespace === undefined ? {} : { namespace }),
  };
}

export function createAtControllers(options: AtControllerOptions): Controller<At>[] {
  const scopes: (string | undefined)[] = options.namespaces ?? [undefined];
  return scopes.map((namespace) => {
    const scope = namespace === undefined ? {} : { namespace };
    const podScope = podCacheScope(namespace);
    const pods = options.manager.factory.forResource<Pod>(podScope).lister;
    const atScope = { group: AT_GROUP, version: AT_VERSION, plural: AT_PLURAL, ...scope };
    // The same scope as the controller's `for`, so the same shared informer.
    options.metrics?.countOverdueIn(options.manager.factory.forResource<At>(atScope).lister);
    return new Controller<At>({
      name: namespace === undefined ? CONTROLLER_NAME : `${CONTROLLER_NAME}-${namespace}`,
      // No predicate: every change of an At made by someone else reconciles it (a write refused with
      // 409 relies on the newer version's event). The echo of the controller's own status write does
      // not: the runtime recognises it, and the reconcile that wrote decided the step after it.
      // Every change of an owned pod may end its run.
      for: { ...atScope, kind: AT_KIND },
      owns: [podScope],
      maxConcurrentReconciles: options.workers,
      reconcile: createAtReconciler({
        api: options.api,
        recorder: options.recorder,
        pods,
        defaultImage: options.defaultImage,
        ...(options.now ? { now: options.now } : {}),
        ...(options.onStart ? { onStart: options.onStart } : {}),
        ...(options.metrics ? { metrics: options.metrics } : {}),
        ...(options.wrapStatusWriter ? { wrapStatusWriter: options.wrapStatusWriter } : {}),
      }),
    });
  });
}
