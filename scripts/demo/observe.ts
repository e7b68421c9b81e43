/** Reads the sample objects from the API server and turns them into the table's rows. */
import type { KubeClient } from '@loopwright/runtime';
import type { AppliedSample } from './generic-samples.ts';
import { AT_NAME, CLUSTER_NAME, NAMESPACE, NODE_NAME } from './names.ts';
import { ATS, MAILGUN_CLUSTERS, NODES } from './resources.ts';
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
    client.resource<At>(ATS).getOptional({ namespace: NAMESPACE, name: AT_NAME }),
    client
      .resource<MailgunCluster>(MAILGUN_CLUSTERS)
      .getOptional({ namespace: NAMESPACE, name: CLUSTER_NAME }),
    client.resource<Node>(NODES).getOptional({ name: NODE_NAME }),
  ]);
  const others = await Promise.all(
    generic.map(async ({ kind, name, type, key }) =>
      readyRow(kind, name, await client.resource<ReadyObject>(type).getOptional(key)),
    ),
  );
  return [
    atRow(AT_NAME, at),
    mailgunClusterRow(CLUSTER_NAME, mailgunCluster),
    nodeRow(NODE_NAME, node, expectedProviderID),
    ...others,
  ];
}
