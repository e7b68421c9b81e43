/**
 * KubeClient against the real API server of the test run: what reaches the metrics, how the server's
 * errors are classified, and credentials the server refuses. The handle's calls are in
 * resource.int.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from './api-error.ts';
import {
  isAlreadyExists,
  isConflict,
  isForbidden,
  isInvalid,
  isNotFound,
  isUnauthorized,
} from './classify.ts';
import { KubeClient } from './client.ts';
import type { KubeObject } from './object.ts';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from './real-server.test-support.ts';
import type { ResourceType } from './resource-type.ts';
import type { RestRequestObservation } from './kube-request.ts';

const CONFIG_MAPS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};
const SERVICE_ACCOUNTS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'serviceaccounts',
  kind: 'ServiceAccount',
  namespaced: true,
};
const SECRETS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'secrets',
  kind: 'Secret',
  namespaced: true,
};

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

interface TokenRequest extends KubeObject {
  spec: { audiences: string[]; expirationSeconds: number };
  status?: { token?: string };
}

const kc = loadTestKubeConfig();
const observed: RestRequestObservation[] = [];
const client = new KubeClient(kc, { observer: { observeRequest: (r) => observed.push(r) } });
const configMaps = client.resource<ConfigMap>(CONFIG_MAPS);
const host = new URL(kc.getCurrentCluster()?.server ?? '').host;
let namespace: TestNamespace;

before(async () => {
  namespace = await createTestNamespace(client, 'client');
});

after(async () => {
  await namespace.cleanup();
  await client.close();
});

describe('KubeClient against the API server', () => {
  it('performs real calls and reports each with code, method and host', async () => {
    observed.length = 0;
    await configMaps.create({ metadata: { namespace: namespace.name, name: 'observed' }, data: { a: '1' } });
    const read = await configMaps.get({ namespace: namespace.name, name: 'observed' });
    assert.deepEqual(read.data, { a: '1' });
    assert.equal(await configMaps.getOptional({ namespace: namespace.name, name: 'absent' }), undefined);
    const version = await client.fetch('/version');
    assert.equal(version.status, 200);
    assert.match(((await version.json()) as { gitVersion: string }).gitVersion, /^v1\.\d+\./);
    assert.deepEqual(
      observed.map(({ method, host: h, statusCode, path }) => ({ method, host: h, statusCode, path })),
      [
        { method: 'POST', host, statusCode: 201, path: `/api/v1/namespaces/${namespace.name}/configmaps` },
        {
          method: 'GET',
          host,
          statusCode: 200,
          path: `/api/v1/namespaces/${namespace.name}/configmaps/observed`,
        },
        {
          method: 'GET',
          host,
          statusCode: 404,
          path: `/api/v1/namespaces/${namespace.name}/configmaps/absent`,
        },
        { method: 'GET', host, statusCode: 200, path: '/version' },
      ],
    );
    assert.ok(observed.every((o) => o.durationSeconds > 0 && o.durationSeconds < 60));
  });

  it('404, 409 and 422 become KubeApiErrors with the right classification', async () => {
    const notFound: unknown = await configMaps
      .get({ namespace: namespace.name, name: 'nope' })
      .catch((e: unknown) => e);
    assert.ok(notFound instanceof KubeApiError);
    assert.equal(notFound.status, 404);
    assert.equal(isNotFound(notFound), true);
    assert.equal(notFound.details?.name, 'nope');

    await configMaps.create({ metadata: { namespace: namespace.name, name: 'twice' } });
    const exists: unknown = await configMaps
      .create({ metadata: { namespace: namespace.name, name: 'twice' } })
      .catch((e: unknown) => e);
    assert.equal(isAlreadyExists(exists), true);
    assert.equal(isConflict(exists), false, 'AlreadyExists is not a Conflict even though both are 409');

    const invalid: unknown = await configMaps
      .create({ metadata: { namespace: namespace.name, name: 'Not_Valid' } })
      .catch((e: unknown) => e);
    assert.equal(isInvalid(invalid), true);
    assert.equal((invalid as KubeApiError).status, 422);
    assert.ok((invalid as KubeApiError).details?.causes?.some((c) => c.field === 'metadata.name'));
  });

  it('a token without RBAC is Forbidden; a bogus token is Unauthorized', async () => {
    await client
      .resource(SERVICE_ACCOUNTS)
      .create({ metadata: { namespace: namespace.name, name: 'nobody' } });
    const token = await client
      .resource<TokenRequest>(SERVICE_ACCOUNTS)
      .subresource('token')
      .create({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        metadata: { namespace: namespace.name, name: 'nobody' },
        spec: { audiences: [], expirationSeconds: 600 },
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
      .resource(SECRETS)
      .list({ namespace: 'kube-system' })
      .catch((e: unknown) => e);
    assert.equal(isForbidden(forbidden), true);
    assert.equal((forbidden as KubeApiError).status, 403);
    const forbiddenWatch: unknown = await (async () => {
      for await (const event of nobody.resource(SECRETS).watch({ signal: AbortSignal.timeout(10_000) })) {
        return event;
      }
    })().catch((e: unknown) => e);
    assert.equal(isForbidden(forbiddenWatch), true, 'a watch that cannot start rejects as a request does');
    await nobody.close();

    const bogus = forToken('not-a-token');
    const unauthorized: unknown = await bogus
      .resource(SECRETS)
      .get({ namespace: namespace.name, name: 'x' })
      .catch((e: unknown) => e);
    assert.equal(isUnauthorized(unauthorized), true);
    await bogus.close();
  });
});
