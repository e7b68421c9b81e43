/** A control plane of the bench's own, started for one phase. */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '@loopwright/runtime';
import { applyCrds, startControlPlane } from '@loopwright/testing';
import { loadAtCrd } from '../src/crd.ts';

/** What a phase gets of its control plane: the admin kubeconfig (object and file) and an admin client. */
export interface BenchPlane {
  kc: KubeConfig;
  kubeconfigPath: string;
  /** Not rate-limited. */
  admin: KubeClient;
}

/** A fresh control plane with the At CRD, for `use` alone; stopped when `use` settles. */
export async function withFreshPlane<T>(use: (plane: BenchPlane) => Promise<T>): Promise<T> {
  const plane = await startControlPlane();
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
