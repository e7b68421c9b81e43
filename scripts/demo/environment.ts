/**
 * Which cluster the demo runs against: the one of `KUBECONFIG` when it is set (resolved exactly as the
 * controllers resolve it, so the line printed names the cluster they will use), else a control plane of
 * its own (real kube-apiserver, etcd and kube-controller-manager on loopback, thrown away at the end).
 */
import { describeContext, KubeClient, loadKubeConfig } from '@loopwright/runtime';
import { startControlPlane } from '@loopwright/testing';
import type { Shutdown } from './shutdown.ts';

export interface DemoCluster {
  /** `embedded`: nobody else uses this cluster, and no kubelet runs pods in it. */
  mode: 'embedded' | 'kubeconfig';
  client: KubeClient;
  /** The `KUBECONFIG` value the controllers get. */
  kubeconfigEnv: string;
}

export async function openCluster(
  env: Record<string, string | undefined>,
  shutdown: Shutdown,
  say: (line: string) => void,
): Promise<DemoCluster> {
  const kubeconfigEnv = env.KUBECONFIG?.trim();
  if (kubeconfigEnv) {
    const kubeConfig = loadKubeConfig({ env });
    const context = describeContext(kubeConfig);
    say(`using the cluster of KUBECONFIG (context ${context.context}, server ${context.server})`);
    const client = new KubeClient(kubeConfig, { rateLimit: false, userAgent: 'loopwright-demo' });
    shutdown.defer('close the API connections', () => client.close());
    // Fail here, with the server's name, rather than halfway through with a less obvious error.
    await client.requestJson('GET', '/version').catch((error: unknown) => {
      throw new Error(
        `cannot reach ${context.server}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    });
    return { mode: 'kubeconfig', client, kubeconfigEnv };
  }

  say('no KUBECONFIG: starting the embedded control plane (kube-apiserver, etcd, kube-controller-manager)');
  const controlPlane = await startControlPlane({
    log: (line) => {
      say(`  ${line}`);
    },
  });
  shutdown.defer('stop the control plane', () => controlPlane.stop());
  const kubeConfig = loadKubeConfig({ kubeconfig: controlPlane.kubeconfigPath });
  const client = new KubeClient(kubeConfig, { rateLimit: false, userAgent: 'loopwright-demo' });
  shutdown.defer('close the API connections', () => client.close());
  return { mode: 'embedded', client, kubeconfigEnv: controlPlane.kubeconfigPath };
}
