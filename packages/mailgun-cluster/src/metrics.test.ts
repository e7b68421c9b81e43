import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { MailgunCluster, MailgunClusterStatus } from './generated/types.ts';
import { createMailgunMetrics, isUnsent } from './metrics.ts';
import { CAPI_GROUP, MESSAGE_ID_ANNOTATION, PAUSED_ANNOTATION, type CapiObject } from './resource.ts';

function aMailgunCluster(
  name: string,
  status?: MailgunClusterStatus,
  annotations?: Record<string, string>,
): MailgunCluster {
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
    kind: 'MailgunCluster',
    metadata: {
      namespace: 'ns',
      name,
      ...(annotations ? { annotations } : {}),
      ownerReferences: [
        { apiVersion: `${CAPI_GROUP}/v1beta2`, kind: 'Cluster', name: `${name}-owner`, uid: 'u' },
      ],
    },
    spec: { priority: 'Urgent', request: 'a cluster', requester: 'dev@example.com' },
    ...(status ? { status } : {}),
  };
}

const aCluster = (name: string, paused = false): CapiObject => ({
  metadata: { namespace: 'ns', name },
  spec: { paused },
});

async function exported(registry: Registry, name: string): Promise<{ labels: object; value: number }[]> {
  return ((await registry.getSingleMetric(name)?.get())?.values ?? []).map(({ labels, value }) => ({
    labels,
    value,
  }));
}

describe('isUnsent', () => {
  it('a MailgunCluster without an accepted mail is unsent, whether its Cluster is cached or not', () => {
    assert.equal(isUnsent(aMailgunCluster('a'), aCluster('a-owner')), true);
    assert.equal(isUnsent(aMailgunCluster('a'), undefined), true);
  });

  it('not once a mail is recorded, in status or only in the annotation', () => {
    assert.equal(isUnsent(aMailgunCluster('a', { messageID: '<m@mg>' }), undefined), false);
    assert.equal(
      isUnsent(aMailgunCluster('a', undefined, { [MESSAGE_ID_ANNOTATION]: '<m@mg>' }), undefined),
      false,
    );
  });

  it('not while paused, by its Cluster or by its own annotation: the controller sends nothing then', () => {
    assert.equal(isUnsent(aMailgunCluster('a'), aCluster('a-owner', true)), false);
    assert.equal(isUnsent(aMailgunCluster('a', undefined, { [PAUSED_ANNOTATION]: '' }), undefined), false);
  });
});

describe('createMailgunMetrics', () => {
  it('counts requests by status code, <error> for one without a response', async () => {
    const registry = new Registry();
    const metrics = createMailgunMetrics(registry);
    metrics.requestEnded(200);
    metrics.requestEnded(undefined);
    metrics.requestEnded(200);
    metrics.requestEnded(401);
    assert.deepEqual(await exported(registry, 'loopwright_mailgun_requests_total'), [
      { labels: { code: '200' }, value: 2 },
      { labels: { code: '<error>' }, value: 1 },
      { labels: { code: '401' }, value: 1 },
    ]);
  });

  it('counts the unsent MailgunClusters of every scope at each scrape, pausing by the owning Cluster', async () => {
    const registry = new Registry();
    const metrics = createMailgunMetrics(registry);
    const clusters = new Map([['paused-owner', aCluster('paused-owner', true)]]);
    const first = [
      aMailgunCluster('waiting'),
      aMailgunCluster('paused'),
      aMailgunCluster('sent', { messageID: '<m>' }),
    ];
    const second: MailgunCluster[] = [];
    metrics.countUnsentIn({ list: () => first }, { get: (_namespace, name) => clusters.get(name) });
    metrics.countUnsentIn({ list: () => second }, { get: () => undefined });
    assert.deepEqual(await exported(registry, 'loopwright_mailgun_clusters_unsent'), [
      { labels: {}, value: 1 },
    ]);
    second.push(aMailgunCluster('new'));
    clusters.set('paused-owner', aCluster('paused-owner', false));
    assert.deepEqual(await exported(registry, 'loopwright_mailgun_clusters_unsent'), [
      { labels: {}, value: 3 },
    ]);
  });
});
