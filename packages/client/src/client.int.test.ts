/**
 * KubeClient, errors and merge patches against the real API server of the test run.
 */
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace, eventually, loadTestKubeConfig, type TestNamespace } from '@loopwright/testing';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  KubeApiError,
  encodeObject,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isInvalid,
  isNotFound,
  isUnauthorized,
  type MessageSchema,
  type RestRequestObservation,
} from '@loopwright/client';
import { ACCEPT_METADATA_ONLY, KubeClient } from './client.ts';
import { mergePatch, mergePatchStatus, type ResourceRef } from './patch.ts';

const kc = loadTestKubeConfig();
const observed: RestRequestObservation[] = [];
const client = new KubeClient(kc, { observer: { observeRequest: (r) => observed.push(r) } });
const core = client.api(CoreV1Api);
const host = new URL(kc.getCurrentCluster()?.server ?? '').host;
let namespace: TestNamespace;

// A CRD of our own (cluster-scoped object: unique group per run, deleted afterwards).
const group = `rt${randomBytes(3).toString('hex')}.loopwright.dev`;
const widgets = { group, version: 'v1', plural: 'widgets' };

before(async () => {
  namespace = await createTestNamespace(kc, 'runtime-client');
  const crds = client.api(ApiextensionsV1Api);
  await crds.createCustomResourceDefinition({
    body: {
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { size: { type: 'integer' } } },
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
      const crd = await crds.readCustomResourceDefinition({ name: `widgets.${group}` });
      assert.ok(crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
    },
    { timeoutMs: 30_000 },
  );
});

after(async () => {
  await client
    .api(ApiextensionsV1Api)
    .deleteCustomResourceDefinition({ name: `widgets.${group}` })
    .catch(() => undefined);
  await namespace.cleanup();
  await client.close();
});

describe('KubeClient against the API server', () => {
  it('performs real calls and reports each with code, method and host', async () => {
    observed.length = 0;
    await core.createNamespacedConfigMap({
      namespace: namespace.name,
      body: { metadata: { name: 'observed' }, data: { a: '1' } },
    });
    const read = await core.readNamespacedConfigMap({ namespace: namespace.name, name: 'observed' });
    assert.deepEqual(read.data, { a: '1' });
    await core.readNamespacedConfigMap({ namespace: namespace.name, name: 'absent' }).catch(() => undefined);
    assert.deepEqual(
      observed.map(({ method, host: h, statusCode }) => ({ method, host: h, statusCode })),
      [
        { method: 'POST', host, statusCode: 201 },
        { method: 'GET', host, statusCode: 200 },
        { method: 'GET', host, statusCode: 404 },
      ],
    );
    assert.ok(observed.every((o) => o.durationSeconds > 0 && o.durationSeconds < 60));
  });

  it('404, 409 and 422 become KubeApiErrors with the right classification', async () => {
    const notFound: unknown = await core
      .readNamespacedConfigMap({ namespace: namespace.name, name: 'nope' })
      .catch((e: unknown) => e);
    assert.ok(notFound instanceof KubeApiError);
    assert.equal(notFound.status, 404);
    assert.equal(isNotFound(notFound), true);
    assert.equal(notFound.details?.name, 'nope');

    await core.createNamespacedConfigMap({
      namespace: namespace.name,
      body: { metadata: { name: 'twice' } },
    });
    const exists: unknown = await core
      .createNamespacedConfigMap({ namespace: namespace.name, body: { metadata: { name: 'twice' } } })
      .catch((e: unknown) => e);
    assert.equal(isAlreadyExists(exists), true);
    assert.equal(isConflict(exists), false, 'AlreadyExists is not a Conflict even though both are 409');

    const invalid: unknown = await core
      .createNamespacedConfigMap({ namespace: namespace.name, body: { metadata: { name: 'Not_Valid' } } })
      .catch((e: unknown) => e);
    assert.equal(isInvalid(invalid), true);
    assert.equal((invalid as KubeApiError).status, 422);
    assert.ok((invalid as KubeApiError).details?.causes?.some((c) => c.field === 'metadata.name'));
  });

  it('a write accepting metadata only is answered with the metadata; its errors are still JSON Statuses', async () => {
    const path = `/api/v1/namespaces/${namespace.name}/configmaps`;
    const body = { metadata: { name: 'meta-only', labels: { a: 'b' } }, data: { big: 'x'.repeat(4096) } };
    const created = await client.requestJson<Record<string, unknown>>('POST', path, {
      body,
      accept: ACCEPT_METADATA_ONLY,
    });
    assert.equal(created.kind, 'PartialObjectMetadata');
    assert.equal(created.apiVersion, 'meta.k8s.io/v1');
    const metadata = created.metadata as { name?: string; uid?: string; labels?: Record<string, string> };
    assert.equal(metadata.name, 'meta-only');
    assert.deepEqual(metadata.labels, { a: 'b' });
    assert.ok(metadata.uid);
    assert.equal(created.data, undefined, 'no data: only the metadata came back');

    const again: unknown = await client
      .requestJson('POST', path, { body, accept: ACCEPT_METADATA_ONLY })
      .catch((e: unknown) => e);
    assert.equal(isAlreadyExists(again), true);
    assert.match((again as KubeApiError).message, /meta-only.*already exists/);
  });

  it('writeProtobuf stores an object as a JSON create would, and fails with the same errors', async () => {
    const path = `/api/v1/namespaces/${namespace.name}/configmaps`;
    const schema: MessageSchema = {
      metadata: [1, { message: { name: [1, 'string'], labels: [11, { map: 'string' }] } }],
      data: [2, { map: 'string' }],
    };
    const configMap = (name: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { app: 'x', 'loopwright.dev/kind': 'widget' } },
      data: { text: 'ünïcode ✓', empty: '' },
    });
    await client.writeProtobuf('POST', path, encodeObject('v1', 'ConfigMap', schema, configMap('proto')));
    await client.requestJson('POST', path, { body: configMap('json') });
    const read = async (name: string) => {
      const { metadata, data } = await core.readNamespacedConfigMap({ name, namespace: namespace.name });
      return { labels: metadata?.labels, data };
    };
    assert.deepEqual(await read('proto'), await read('json'));
    assert.deepEqual((await read('proto')).data, configMap('x').data);

    const errorOf = (name: string, protobuf: boolean): Promise<KubeApiError> =>
      (protobuf
        ? client.writeProtobuf('POST', path, encodeObject('v1', 'ConfigMap', schema, configMap(name)))
        : client.requestJson('POST', path, { body: configMap(name) })
      ).then(
        () => assert.fail(`creating ${name} succeeded`),
        (error: unknown) => error as KubeApiError,
      );
    const exists = await errorOf('proto', true);
    assert.equal(isAlreadyExists(exists), true);
    assert.equal(exists.message, (await errorOf('proto', false)).message);
    const invalid = await errorOf('Not_Valid', true);
    assert.equal(isInvalid(invalid), true);
    assert.equal(invalid.status, 422);
    assert.deepEqual(invalid.details, (await errorOf('Not_Valid', false)).details);
    assert.ok(invalid.details?.causes?.some((c) => c.field === 'metadata.name'));
  });

  it('merge-patches status with optimistic concurrency: a stale resourceVersion gets Conflict', async () => {
    const objects = client.api(CustomObjectsApi);
    const created = (await objects.createNamespacedCustomObject({
      ...widgets,
      namespace: namespace.name,
      body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } },
    })) as { metadata: { resourceVersion: string } };
    const ref: ResourceRef = { ...widgets, namespace: namespace.name, name: 'w' };
    const staleVersion = created.metadata.resourceVersion;

    const patched = await mergePatchStatus<{
      status: { phase: string };
      spec: { size: number };
      metadata: { resourceVersion: string };
    }>(client, ref, { status: { phase: 'Ready' }, spec: { size: 99 } }, { resourceVersion: staleVersion });
    assert.equal(patched.status.phase, 'Ready');
    assert.equal(patched.spec.size, 1, 'the status endpoint ignores spec');

    const conflict: unknown = await mergePatchStatus(
      client,
      ref,
      { status: { phase: 'Stale' } },
      { resourceVersion: staleVersion },
    ).catch((e: unknown) => e);
    assert.ok(conflict instanceof KubeApiError);
    assert.equal(isConflict(conflict), true);

    // Without a resourceVersion the patch applies to whatever is current; the main resource keeps status.
    await mergePatch(client, ref, { spec: { size: 2 }, status: { phase: 'Ignored' } });
    const current = (await objects.getNamespacedCustomObject({
      ...widgets,
      namespace: namespace.name,
      name: 'w',
    })) as { spec: { size: number }; status: { phase: string } };
    assert.deepEqual([current.spec.size, current.status.phase], [2, 'Ready']);

    const missing: unknown = await mergePatchStatus(client, { ...ref, name: 'absent' }, { status: {} }).catch(
      (e: unknown) => e,
    );
    assert.equal(isNotFound(missing), true);
  });

  it('a token without RBAC is Forbidden; a bogus token is Unauthorized', async () => {
    await core.createNamespacedServiceAccount({
      namespace: namespace.name,
      body: { metadata: { name: 'nobody' } },
    });
    const token = await core.createNamespacedServiceAccountToken({
      namespace: namespace.name,
      name: 'nobody',
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const forToken = (value: string): KubeClient => {
      const cluster = kc.getCurrentCluster();
      assert.ok(cluster);
      const restricted = new KubeConfig();
      restricted.loadFromOptions({
        clusters: [cluster],
        users: [{ name: 'token-user', token: value }],
        contexts: [{ name: 'restricted', cluster: cluster.name, user: 'token-user' }],
        currentContext: 'restricted',
      });
      return new KubeClient(restricted);
    };

    const nobody = forToken(token.status?.token ?? '');
    const forbidden: unknown = await nobody
      .api(CoreV1Api)
      .listNamespacedSecret({ namespace: 'kube-system' })
      .catch((e: unknown) => e);
    assert.equal(isForbidden(forbidden), true);
    assert.equal((forbidden as KubeApiError).status, 403);
    const rawForbidden: unknown = await nobody
      .requestJson('GET', `/api/v1/namespaces/${namespace.name}/configmaps`)
      .catch((e: unknown) => e);
    assert.equal(isForbidden(rawForbidden), true);
    await nobody.close();

    const bogus = forToken('not-a-token');
    const unauthorized: unknown = await bogus
      .api(CoreV1Api)
      .listNamespace()
      .catch((e: unknown) => e);
    assert.equal(isUnauthorized(unauthorized), true);
    await bogus.close();
  });
});
