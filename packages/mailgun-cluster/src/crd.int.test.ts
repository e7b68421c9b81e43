/**
 * The chart's CRDs as the API server enforces them: what a user cannot write, and the Cluster API
 * contract label, checked against the Cluster API installed beside them, without which its Cluster
 * controller never resolves the infrastructureRef.
 */
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { startClusterApi, type ClusterApi } from '@loopwright/cluster';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CAPI_GROUP, CAPI_VERSION } from './resource.ts';
import { installCrds } from './testing/harness.ts';

const GROUP = 'infrastructure.cluster.x-k8s.io';
let kc: KubeConfig;
let ns: TestNamespace;
let clusterApi: ClusterApi;

before(async () => {
  kc = loadTestKubeConfig();
  await installCrds(kc);
  ns = await createTestNamespace(kc, 'mailgun-crd');
  clusterApi = await startClusterApi({ kubeConfig: kc, namespace: ns.name });
});
after(async () => {
  await clusterApi.stop();
  await ns.cleanup();
});

const valid = { priority: 'Urgent', request: 'one cluster', requester: 'dev@example.com' };
let counter = 0;

function create(plural: 'mailgunclusters' | 'mailgunmachines', spec: Record<string, unknown>) {
  const kind = plural === 'mailgunclusters' ? 'MailgunCluster' : 'MailgunMachine';
  counter += 1;
  return kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: GROUP,
    version: 'v1alpha1',
    namespace: ns.name,
    plural,
    body: { apiVersion: `${GROUP}/v1alpha1`, kind, metadata: { name: `obj-${counter}` }, spec },
  });
}

async function rejected(plural: 'mailgunclusters' | 'mailgunmachines', spec: Record<string, unknown>) {
  await assert.rejects(create(plural, spec), (error: unknown) => {
    assert.equal((error as { code?: number }).code, 422, JSON.stringify(spec).slice(0, 200));
    return true;
  });
}

describe('the CRDs', () => {
  it('carry the contract label of the Cluster API beside them, naming every served version, and the provider label', async () => {
    const api = kc.makeApiClient(ApiextensionsV1Api);
    // Cluster API's contract is the version of its own types (contract.Version is
    // clusterv1.GroupVersion.Version), which its CRDs store; the controller watches that version, so
    // the API server serves it what it stores, without conversion.
    const clusters = await api.readCustomResourceDefinition({ name: `clusters.${CAPI_GROUP}` });
    const contract = clusters.spec.versions.find((version) => version.storage)?.name;
    assert.equal(contract, CAPI_VERSION, `Cluster API ${clusterApi.version} stores ${contract}`);
    for (const plural of ['mailgunclusters', 'mailgunmachines']) {
      const crd = await api.readCustomResourceDefinition({ name: `${plural}.${GROUP}` });
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
