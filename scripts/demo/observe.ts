/** Reads the three sample objects from the API server and turns them into the table's rows. */
import type { KubeClient } from '@loopwright/runtime';
import { getIfExists } from './read.ts';
import { AT_NAME, CLUSTER_NAME, NODE_NAME, PATHS } from './names.ts';
import { atRow, mailgunClusterRow, nodeRow, type At, type MailgunCluster, type Node } from './rows.ts';
import type { Row } from './table.ts';

export async function observeRows(client: KubeClient, expectedProviderID: string): Promise<Row[]> {
  const [at, mailgunCluster, node] = await Promise.all([
    getIfExists<At>(client, `${PATHS.ats}/${AT_NAME}`),
    getIfExists<MailgunCluster>(client, `${PATHS.mailgunClusters}/${CLUSTER_NAME}`),
    getIfExists<Node>(client, `${PATHS.nodes}/${NODE_NAME}`),
  ]);
  return [
    atRow(AT_NAME, at),
    mailgunClusterRow(CLUSTER_NAME, mailgunCluster),
    nodeRow(NODE_NAME, node, expectedProviderID),
  ];
}
