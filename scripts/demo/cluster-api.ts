/**
 * Cluster API beside the demo's MailgunCluster, as in production: it makes the Cluster the
 * MailgunCluster's owner (mailgun-cluster sends nothing before) and copies what the provider reports.
 * Where the cluster has a Cluster API of its own, that one; else the real core manager of
 * @loopwright/cluster (`startClusterApi`: the pinned release's CRDs, webhooks and controllers, built by
 * `./scripts/setup.sh`), run on this machine for the demo's namespace only.
 */
import { describeContext, loadKubeConfig } from '@loopwright/runtime';
import { CLUSTER_API_FIELD_MANAGER, startClusterApi } from '@loopwright/cluster';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DemoCluster } from './environment.ts';
import { NAMESPACE } from './names.ts';
import { CUSTOM_RESOURCE_DEFINITIONS } from './resources.ts';
import { deleteCluster } from './samples.ts';
import type { Context } from './start-controllers.ts';

const CLUSTERS_CRD = 'clusters.cluster.x-k8s.io';
/** The Cluster API version mailgun-cluster watches Clusters and Machines in. */
const WATCHED_VERSION = 'v1beta2';

interface Crd {
  metadata: { managedFields?: { manager?: string }[] };
  spec: { versions: { name: string; served: boolean }[] };
}

/** Which Cluster API reconciles the demo's Cluster, for the line the demo prints. */
export type ClusterApiReport =
  /** The cluster's own (its CRDs were not installed by @loopwright/cluster). */
  | { owner: 'cluster' }
  /** The demo's manager; `installedCrds`: its CRDs were not in the cluster before. */
  | { owner: 'demo'; version: string; installedCrds: boolean };

/**
 * Starts the demo's Cluster API core manager unless the cluster has a Cluster API of its own, whose CRDs
 * it must not replace. Needs the demo's namespace (the manager's webhooks are limited to it). The
 * manager stops with the demo, after the demo's Cluster is gone on a cluster that outlives the demo:
 * the Cluster carries Cluster API's finalizer, which only a running manager removes.
 */
export async function ensureClusterApi(
  ctx: Context,
  cluster: DemoCluster,
  logDir: string,
): Promise<ClusterApiReport> {
  const { client } = cluster;
  const existing = await client
    .resource<Crd>(CUSTOM_RESOURCE_DEFINITIONS)
    .getOptional({ name: CLUSTERS_CRD });
  if (existing && !existing.metadata.managedFields?.some((f) => f.manager === CLUSTER_API_FIELD_MANAGER)) {
    if (!existing.spec.versions.some((v) => v.name === WATCHED_VERSION && v.served))
      throw new Error(
        `Cluster API's Cluster CRD does not serve ${WATCHED_VERSION}: mailgun-cluster needs Cluster API v1.11 or newer`,
      );
    return { owner: 'cluster' };
  }
  const kubeConfig = loadKubeConfig({ env: { KUBECONFIG: cluster.kubeconfigEnv } });
  let clusterApi;
  try {
    clusterApi = await startClusterApi({
      kubeConfig,
      namespace: NAMESPACE,
      log: (line) => {
        ctx.say(`  ${line}`);
      },
    });
  } catch (error) {
    // Its webhooks listen on this machine's loopback: only an API server on this machine reaches them.
    const hint =
      cluster.mode === 'kubeconfig'
        ? ` (the API server ${describeContext(kubeConfig).server} must reach its webhooks on this machine's loopback; ` +
          'elsewhere install Cluster API in the cluster first: clusterctl init)'
        : '';
    throw new Error(`Cluster API's core manager did not start${hint}`, { cause: error });
  }
  const running = clusterApi;
  ctx.shutdown.defer('stop Cluster API', async () => {
    try {
      if (cluster.mode !== 'embedded') await deleteCluster(client);
    } finally {
      await writeFile(join(logDir, 'cluster-api-manager.log'), await running.logs()).finally(() =>
        running.stop(),
      );
    }
  });
  return { owner: 'demo', version: running.version, installedCrds: existing === undefined };
}
