/** A control plane of the bench's own, started for one phase. */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '@loopwright/runtime';
import { applyCrds, startControlPlane } from '@loopwright/testing';
import { loadAtCrd } from '../src/crd.ts';
import type { CpuPlacement } from './cpus.ts';

/** What a phase gets of its control plane: the admin kubeconfig (object and file) and an admin client. */
export interface BenchPlane {
  kc: KubeConfig;
  kubeconfigPath: string;
  /** Not rate-limited. */
  admin: KubeClient;
}

/**
 * A fresh control plane with the At CRD, for `use` alone; stopped when `use` settles. With a `placement`,
 * its processes run on the CPUs that gives them.
 */
export async function withFreshPlane<T>(
  use: (plane: BenchPlane) => Promise<T>,
  placement?: CpuPlacement,
): Promise<T> {
  const plane = await (placement ? placement.forControlPlane(startControlPlane) : startControlPlane());
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  const admin = new KubeClient(kc, { rateLimit: false });
  try {
    await applyCrds(kc, [loadAtCrd()], { fieldManager: 'at-scheduler-bench' });
    return await use({ kc, admin, kubeconfigPath: plane.kubeconfigPath });
  } finally {
    await admin.close();
    await plane.stop();
  }
}
