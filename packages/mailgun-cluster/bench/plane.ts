/** A control plane of the bench's own, started for one phase, with the CRDs the controller watches. */
import { KubeConfig } from '@kubernetes/client-node';
import { startClusterApi } from '@loopwright/cluster';
import { createTestNamespace, startControlPlane } from '@loopwright/envtest';
import { KubeClient } from '@loopwright/runtime';
import { installCrds } from '../src/objects.test-support.ts';

export interface BenchPlane {
  kubeconfigPath: string;
  /** Not rate-limited. */
  admin: KubeClient;
  /** Where the MailgunClusters, the replicas' watch and their member Leases are. */
  namespace: string;
}

/** A fresh control plane for `use` alone; stopped when `use` settles. */
export async function withFreshPlane<T>(use: (plane: BenchPlane) => Promise<T>): Promise<T> {
  const plane = await startControlPlane({ beforeControllerManager: installAllCrds });
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  const admin = new KubeClient(kc, { rateLimit: false });
  try {
    const namespace = (await createTestNamespace(kc, 'mailgun-bench')).name;
    return await use({ kubeconfigPath: plane.kubeconfigPath, admin, namespace });
  } finally {
    await admin.close();
    await plane.stop();
  }
}

/**
 * The chart's CRDs and Cluster API's (Cluster, Machine: the controller's caches list them), served before
 * kube-controller-manager starts, so its garbage collector knows them from its first discovery and does
 * not list them at a resync in the middle of the measurement. Cluster API's CRDs come from its own
 * release through `startClusterApi`, whose manager is stopped at once: the bench writes the owner
 * references Cluster API's Cluster controller would, so no Cluster API process takes CPU from the
 * replicas. Everything is written and read at v1beta2, the stored version, which needs no conversion
 * webhook (as in the package's tests after their manager stops).
 */
async function installAllCrds(kubeconfigPath: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  await installCrds(kc);
  const clusterApi = await startClusterApi({ kubeconfigPath });
  await clusterApi.stop();
}
