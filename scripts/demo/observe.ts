/** Reads the sample objects from the API server and turns them into the table's rows. */
import type { KubeClient } from '@loopwright/runtime';
import type { AppliedSample } from './generic-samples.ts';
import { getIfExists } from './read.ts';
import { AT_NAME, CLUSTER_NAME, NODE_NAME, PATHS } from './names.ts';
import {
  atRow,
  mailgunClusterRow,
  nodeRow,
  readyRow,
  type At,
  type MailgunCluster,
  type Node,
  type ReadyObject,
} from './rows.ts';
import type { Row } from './table.ts';

export async function observeRows(
  client: KubeClient,
  expectedProviderID: string,
  generic: readonly AppliedSample[],
): Promise<Row[]> {
  const [at, mailgunCluster, node] = await Promise.all([
    getIfExists<At>(client, `${PATHS.ats}/${AT_NAME}`),
    getIfExists<MailgunCluster>(client, `${PATHS.mailgunClusters}/${CLUSTER_NAME}`),
    getIfExists<Node>(client, `${PATHS.nodes}/${NODE_NAME}`),
  ]);
  const others = await Promise.all(
    generic.map(async ({ kind, name, path }) =>
      readyRow(kind, name, await getIfExists<ReadyObject>(client, path)),
    ),
  );
  return [
    atRow(AT_NAME, at),
    mailgunClusterRow(CLUSTER_NAME, mailgunCluster),
    nodeRow(NODE_NAME, node, expectedProviderID),
    ...others,
  ];
}
