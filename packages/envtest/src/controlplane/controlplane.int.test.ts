import {
  ApiextensionsV1Api,
  AuthenticationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { KubeClient } from '@loopwright/client';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '../kube.ts';

const group = 'harness.loopwright.dev';
const version = 'v1';
const plural = 'widgets';

/** Reads the HTTP status of a failed client-node call (its ApiException carries `code`). */
function statusOf(error: unknown): number | undefined {
  return (error as { code?: number }).code;
}

describe('the control plane is a real Kubernetes API server', () => {
  let kc: KubeConfig;
  let ns: TestNamespace;

  before(async () => {
    kc = loadTestKubeConfig();
    ns = await createTestNamespace(kc, 'harness');
    const apiext = kc.makeApiClient(ApiextensionsV1Api);
    await apiext.createCustomResourceDefinition({
      body: {
        metadata: { name: `${plural}.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural, singular: 'widget', kind: 'Widget' },
          versions: [
            {
              name: version,
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      required: ['size'],
                      properties: { size: { type: 'integer', minimum: 1 } },
                    },
                    status: { type: 'object', properties: { phase: { type: 'string' } } },
                  },
                },
              },
            },
          ],
        },
      },
    });
    await eventually(
      async () => {
        const crd = await apiext.readCustomResourceDefinition({ name: `${plural}.${group}` });
        assert.ok(crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
      },
      { timeoutMs: 30_000 },
    );
  });

  after(async () => {
    await ns.cleanup();
  });

  it('validates custom resources against the CRD schema', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const body = {
      apiVersion: `${group}/${version}`,
      kind: 'Widget',
      metadata: { name: 'too-small' },
      spec: { size: 0 },
    };
    await assert.rejects(
      custom.createNamespacedCustomObject({ group, version, namespace: ns.name, plural, body }),
      (error) => statusOf(error) === 422,
    );
  });

  it('delivers an ADDED event to a watch for a created custom resource', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const client = new KubeClient(kc, { rateLimit: false });
    const widgets = client.resource({ group, version, plural, kind: 'Widget', namespaced: true });
    const seen: string[] = [];
    const stop = new AbortController();
    // From no resourceVersion: an object created before the watch starts still arrives, as ADDED.
    const watching = (async () => {
      for await (const event of widgets.watch({ signal: stop.signal, namespace: ns.name }))
        if (event.type !== 'ERROR') seen.push(`${event.type} ${event.object.metadata?.name ?? ''}`);
    })();
    try {
      const body = {
        apiVersion: `${group}/${version}`,
        kind: 'Widget',
        metadata: { name: 'watched' },
        spec: { size: 3 },
      };
      await custom.createNamespacedCustomObject({ group, version, namespace: ns.name, plural, body });
      await eventually(() => {
        assert.ok(seen.includes('ADDED watched'), `events: ${seen.join(', ')}`);
      });
    } finally {
      stop.abort();
      await watching;
      await client.close();
    }
  });

  it('patches the status subresource without touching spec', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const body = {
      apiVersion: `${group}/${version}`,
      kind: 'Widget',
      metadata: { name: 'status' },
      spec: { size: 5 },
    };
    await custom.createNamespacedCustomObject({ group, version, namespace: ns.name, plural, body });
    await custom.patchNamespacedCustomObjectStatus(
      {
        group,
        version,
        namespace: ns.name,
        plural,
        name: 'status',
        body: { spec: { size: 99 }, status: { phase: 'Ready' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const stored = (await custom.getNamespacedCustomObject({
      group,
      version,
      namespace: ns.name,
      plural,
      name: 'status',
    })) as {
      spec: { size: number };
      status: { phase: string };
    };
    assert.equal(stored.status.phase, 'Ready');
    assert.equal(stored.spec.size, 5, 'a status patch must not change spec');
  });

  it('denies a ServiceAccount token without RBAC bindings (403), while admin is allowed', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name: 'nobody' } } });
    const tokenRequest = await kc.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
      name: 'nobody',
      namespace: ns.name,
      body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 600 } },
    });
    const token = tokenRequest.status?.token;
    assert.ok(token, 'TokenRequest returned a token');

    const cluster = kc.getCurrentCluster();
    assert.ok(cluster);
    const asNobody = new KubeConfig();
    asNobody.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'nobody', token }],
      contexts: [{ name: 'nobody', cluster: cluster.name, user: 'nobody' }],
      currentContext: 'nobody',
    });
    // Authenticated (not 401) but not authorised: proves both the token signer and RBAC are live.
    const review = await asNobody.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    assert.equal(review.status?.userInfo?.username, `system:serviceaccount:${ns.name}:nobody`);
    await assert.rejects(
      asNobody.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns.name }),
      (error) => statusOf(error) === 403,
    );
    await core.listNamespacedPod({ namespace: ns.name });
  });

  it('garbage-collects an owned object when its owner is deleted', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const owner = await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'owner' } },
    });
    const owned: V1ConfigMap = {
      metadata: {
        name: 'owned',
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            name: 'owner',
            uid: owner.metadata?.uid ?? '',
            controller: true,
          },
        ],
      },
    };
    await core.createNamespacedConfigMap({ namespace: ns.name, body: owned });
    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: ns.name });
    await eventually(
      () =>
        assert.rejects(
          core.readNamespacedConfigMap({ name: 'owned', namespace: ns.name }),
          (error) => statusOf(error) === 404,
        ),
      { timeoutMs: 30_000 },
    );
  });
});
