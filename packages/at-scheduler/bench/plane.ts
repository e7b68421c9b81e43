/** A control plane of the bench's own, started for one phase. */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '@loopwright/runtime';
import { applyCrds, startControlPlane, type ControlPlane } from '@loopwright/envtest';
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
 * its processes run on the CPUs that gives them; `apiServerFlags` go to kube-apiserver (feature gates).
 */
export async function withFreshPlane<T>(
  use: (plane: BenchPlane) => Promise<T>,
  placement?: CpuPlacement,
  apiServerFlags: string[] = [],
): Promise<T> {
  const start = (): Promise<ControlPlane> =>
    startControlPlane({ beforeControllerManager: serveAts, apiServerFlags });
  const plane = await (placement ? placement.forControlPlane(start) : start());
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  const admin = new KubeClient(kc, { rateLimit: false });
  try {
    return await use({ kc, admin, kubeconfigPath: plane.kubeconfigPath });
  } finally {
    await admin.close();
    await plane.stop();
  }
}

/**
 * The At CRD, applied and in the API server's discovery (`applyCrds` waits for both) before
 * kube-controller-manager starts: its garbage collector then watches Ats from its first discovery, as in
 * a cluster where the CRD is old. Applied after, the collector picked Ats up at its first resync, 30 s
 * in: in the middle of a phase's window, where it listed the Ats and looked up the owners of the pods it
 * had seen meanwhile (163 GETs of Ats in one N = 2,000 window), work the API server did for that phase
 * alone.
 */
async function serveAts(kubeconfigPath: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  await applyCrds(kc, [loadAtCrd()], { fieldManager: 'at-scheduler-bench' });
}
