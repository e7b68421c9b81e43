/** Reads the three sample objects from the API server and turns them into the table's rows. */
import { isNotFound, type KubeClient } from '@loopwright/runtime';
import { AT_NAME, CLUSTER_NAME, NODE_NAME, PATHS } from './names.ts';
import { atRow, mailgunClusterRow, nodeRow, type At, type MailgunCluster, type Node } from './rows.ts';
import type { Row } from './table.ts';

async function get<T>(client: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await client.requestJson<T>('GET', path);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export async function observeRows(client: KubeClient, expectedProviderID: string): Promise<Row[]> {
  const [at, mailgunCluster, node] = await Promise.all([
    get<At>(client, `${PATHS.ats}/${AT_NAME}`),
    get<MailgunCluster>(client, `${PATHS.mailgunClusters}/${CLUSTER_NAME}`),
    get<Node>(client, `${PATHS.nodes}/${NODE_NAME}`),
  ]);
  return [
    atRow(AT_NAME, at),
    mailgunClusterRow(CLUSTER_NAME, mailgunCluster),
    nodeRow(NODE_NAME, node, expectedProviderID),
  ];
}
