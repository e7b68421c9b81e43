/**
 * The bench's MailgunClusters, each owned by a Cluster of the same name, as a user and Cluster API leave
 * them: the user creates both, Cluster API's Cluster controller adds a plain owner reference to the
 * Cluster and the cluster-name label (here written at creation, as its controller is not running).
 */
import { apiVersionOf, type KubeClient, type KubeObject } from '@loopwright/runtime';
import { CAPI_GROUP, CAPI_VERSION, CLUSTERS, INFRA_GROUP, MAILGUN_CLUSTERS } from '../src/resource.ts';

const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** Creates in flight at once: enough to keep the API server busy, few enough not to trip its limits. */
const CONCURRENCY = 16;

/** What the exactly-once check needs of each created MailgunCluster. */
export interface CreatedCluster {
  name: string;
  uid: string;
}

function clusterName(index: number): string {
  return `bench-${String(index).padStart(5, '0')}`;
}

/** The subject the controller gives a MailgunCluster's mail (src/mail.ts), priority `Urgent`. */
export function subjectOf(name: string): string {
  return `[Urgent] New Cluster ${name} requested`;
}

export async function createClusters(
  admin: KubeClient,
  namespace: string,
  n: number,
): Promise<CreatedCluster[]> {
  const created: CreatedCluster[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      created.push(await createPair(admin, namespace, clusterName(next++)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n) }, worker));
  return created;
}

async function createPair(admin: KubeClient, namespace: string, name: string): Promise<CreatedCluster> {
  const cluster = await admin.resource<KubeObject>(CLUSTERS).create({
    apiVersion: apiVersionOf(CLUSTERS),
    kind: CLUSTERS.kind,
    metadata: { name, namespace },
    spec: { infrastructureRef: { apiGroup: INFRA_GROUP, kind: MAILGUN_CLUSTERS.kind, name } },
  } as KubeObject);
  const mailgunCluster = await admin.resource<KubeObject>(MAILGUN_CLUSTERS).create({
    apiVersion: apiVersionOf(MAILGUN_CLUSTERS),
    kind: MAILGUN_CLUSTERS.kind,
    metadata: {
      name,
      namespace,
      labels: { [CLUSTER_NAME_LABEL]: name },
      ownerReferences: [
        {
          apiVersion: `${CAPI_GROUP}/${CAPI_VERSION}`,
          kind: CLUSTERS.kind,
          name,
          uid: cluster.metadata?.uid ?? '',
        },
      ],
    },
    spec: { priority: 'Urgent', requester: 'dev@example.com', request: `a cluster called ${name}` },
  } as KubeObject);
  return { name, uid: mailgunCluster.metadata?.uid ?? '' };
}
