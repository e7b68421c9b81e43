/**
 * The chart's CRDs as the API server enforces them: what a user cannot write, and the Cluster API
 * contract label, checked against the Cluster API installed beside them, without which its Cluster
 * controller never resolves the infrastructureRef.
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { KubeClient, apiVersionOf, isInvalid, type KubeObject, type ResourceType } from '@loopwright/runtime';
import { startClusterApi, type ClusterApi } from '@loopwright/cluster';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { installCrds } from './objects.test-support.ts';
import { CAPI_GROUP, CAPI_VERSION, INFRA_GROUP, MAILGUN_CLUSTERS, MAILGUN_MACHINES } from './resource.ts';

const CRDS: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};
let client: KubeClient;
let ns: TestNamespace;
let clusterApi: ClusterApi;

before(async () => {
  const kc = loadTestKubeConfig();
  client = new KubeClient(kc, { rateLimit: false });
  await installCrds(kc);
  ns = await createTestNamespace(kc, 'mailgun-crd');
  clusterApi = await startClusterApi({ kubeConfig: kc, namespace: ns.name });
});
after(async () => {
  await clusterApi.stop();
  await ns.cleanup();
  await client.close();
});

const valid = { priority: 'Urgent', request: 'one cluster', requester: 'dev@example.com' };
let counter = 0;

type Plural = 'mailgunclusters' | 'mailgunmachines';

function create(plural: Plural, spec: Record<string, unknown>) {
  const type = plural === 'mailgunclusters' ? MAILGUN_CLUSTERS : MAILGUN_MACHINES;
  counter += 1;
  return client.resource(type).create({
    apiVersion: apiVersionOf(type),
    kind: type.kind,
    metadata: { namespace: ns.name, name: `obj-${counter}` },
    spec,
  } as KubeObject);
}

async function rejected(plural: Plural, spec: Record<string, unknown>) {
  await assert.rejects(create(plural, spec), (error: unknown) => {
    assert.ok(isInvalid(error), `${String(error)}: ${JSON.stringify(spec).slice(0, 200)}`);
    return true;
  });
}

describe('the CRDs', () => {
  it('carry the contract label of the Cluster API beside them, naming every served version, and the provider label', async () => {
    const crds = client.resource<V1CustomResourceDefinition & KubeObject>(CRDS);
    // Cluster API's contract is the version of its own types (contract.Version is
    // clusterv1.GroupVersion.Version), which its CRDs store; the controller watches that version, so
    // the API server serves it what it stores, without conversion.
    const clusters = await crds.get({ name: `clusters.${CAPI_GROUP}` });
    const contract = clusters.spec.versions.find((version) => version.storage)?.name;
    assert.equal(contract, CAPI_VERSION, `Cluster API ${clusterApi.version} stores ${contract}`);
    for (const plural of ['mailgunclusters', 'mailgunmachines']) {
      const crd = await crds.get({ name: `${plural}.${INFRA_GROUP}` });
      const labels = crd.metadata?.labels ?? {};
      // One contract label (with two, Cluster API takes the newest it knows, and the other is unread):
      // `cluster.x-k8s.io/<contract>: <served versions joined by _>`.
      assert.deepEqual(
        Object.keys(labels).filter((key) => key.startsWith(`${CAPI_GROUP}/v`)),
        [`${CAPI_GROUP}/${contract}`],
        plural,
      );
      assert.equal(
        labels[`${CAPI_GROUP}/${contract}`],
        crd.spec.versions
          .filter((version) => version.served)
          .map((version) => version.name)
          .join('_'),
        plural,
      );
      assert.equal(labels['cluster.x-k8s.io/provider'], 'infrastructure-mailgun', plural);
    }
  });

  it('accept every priority, a maximal request and an endpoint', async () => {
    for (const priority of ['Urgent', 'ExtremelyUrgent', 'BusinessCritical'])
      await create('mailgunclusters', { ...valid, priority });
    await create('mailgunclusters', {
      ...valid,
      request: 'x'.repeat(4096),
      controlPlaneEndpoint: { host: 'api.example.com', port: 6443 },
    });
    await create('mailgunmachines', { ...valid, providerID: 'mailgun://worker-1' });
  });

  it('reject a missing or unknown priority, an empty or oversized request and a non-address requester', async () => {
    for (const plural of ['mailgunclusters', 'mailgunmachines'] as const) {
      await rejected(plural, { request: 'x', requester: 'dev@example.com' });
      await rejected(plural, { ...valid, priority: 'Whenever' });
      await rejected(plural, { ...valid, request: '' });
      await rejected(plural, { ...valid, request: 'x'.repeat(4097) });
      await rejected(plural, { priority: 'Urgent', request: 'x' });
      for (const requester of ['dev', 'dev@example', 'Dev <dev@example.com>', 'a b@example.com'])
        await rejected(plural, { ...valid, requester });
    }
  });

  it('reject an incomplete or out-of-range controlPlaneEndpoint', async () => {
    await rejected('mailgunclusters', { ...valid, controlPlaneEndpoint: { host: 'api.example.com' } });
    await rejected('mailgunclusters', { ...valid, controlPlaneEndpoint: { port: 6443 } });
    await rejected('mailgunclusters', { ...valid, controlPlaneEndpoint: { host: '', port: 6443 } });
    await rejected('mailgunclusters', { ...valid, controlPlaneEndpoint: { host: 'h.example.com', port: 0 } });
    await rejected('mailgunclusters', {
      ...valid,
      controlPlaneEndpoint: { host: 'h.example.com', port: 65536 },
    });
  });
});
