import { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '@loopwright/core/testing';
import {
  KubeApiError,
  isNotFound,
  type RateLimiterWaitObservation,
  type RestRequestObservation,
} from '@loopwright/client';
import { KubeClient } from './client.ts';
import type { KubeObject } from './object.ts';
import type { ResourceType } from './resource-type.ts';

/**
 * A local HTTP stand-in for what reaches the wire through a handle and `fetch`: one transport under
 * both (credentials, metrics, limiter). The transport itself is tested in transport.test.ts, the
 * handle's API semantics against the real API server in resource.int.test.ts.
 */
let server: Server;
let host: string;
const received: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];

before(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      if (request.url?.includes('empty')) {
        response.writeHead(204, { 'x-note': 'none' }).end();
        return;
      }
      if (request.url?.includes('cookies')) {
        response.writeHead(200, { 'set-cookie': ['a=1', 'b=2'], 'content-type': 'text/plain' }).end('ok');
        return;
      }
      if (request.url?.includes('missing')) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'NotFound',
            code: 404,
            message: 'namespaces "missing" not found',
          }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'x' },
          echo: body ? (JSON.parse(body) as unknown) : null,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.close();
});

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: `http://${host}/`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'the-token' }],
    contexts: [{ name: 'local', cluster: 'local', user: 'u' }],
    currentContext: 'local',
  });
  return kc;
}

function recorder(): {
  requests: RestRequestObservation[];
  waits: RateLimiterWaitObservation[];
  observer: {
    observeRequest(r: RestRequestObservation): void;
    observeRateLimiterWait(w: RateLimiterWaitObservation): void;
  };
} {
  const requests: RestRequestObservation[] = [];
  const waits: RateLimiterWaitObservation[] = [];
  return {
    requests,
    waits,
    observer: {
      observeRequest: (r) => requests.push(r),
      observeRateLimiterWait: (w) => waits.push(w),
    },
  };
}

const namespaces: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'namespaces',
  kind: 'Namespace',
  namespaced: false,
};
const ats: ResourceType = {
  group: 'example.com',
  version: 'v1',
  plural: 'ats',
  kind: 'At',
  namespaced: true,
};

describe('KubeClient', () => {
  it('handles: credentials, user agent, metrics per request, typed errors', async () => {
    const metrics = recorder();
    const client = new KubeClient(kubeConfig(), { observer: metrics.observer, rateLimit: false });
    received.length = 0;
    const handle = client.resource(namespaces);
    const namespace = await handle.get({ name: 'x' });
    assert.equal(namespace.metadata?.name, 'x');
    const error: unknown = await handle.get({ name: 'missing' }).catch((e: unknown) => e);
    assert.ok(error instanceof KubeApiError, 'a handle rejects with KubeApiErrors');
    assert.equal(isNotFound(error), true);
    assert.equal(error.message, 'namespaces "missing" not found (NotFound, 404)');

    assert.equal(received[0]?.url, '/api/v1/namespaces/x');
    assert.equal(received[0].headers.authorization, 'Bearer the-token');
    assert.equal(received[0].headers['user-agent'], 'loopwright');
    assert.deepEqual(
      metrics.requests.map(({ method, host: h, statusCode }) => ({ method, host: h, statusCode })),
      [
        { method: 'GET', host, statusCode: 200 },
        { method: 'GET', host, statusCode: 404 },
      ],
    );
    assert.ok(metrics.requests.every((r) => r.durationSeconds >= 0));
    assert.deepEqual(client.stats(), { requests: 2, throttledRequests: 0, rateLimiterWaitSeconds: 0 });
    await client.close();
  });

  it('a network failure is observed with no status code (client-go "<error>")', async () => {
    const metrics = recorder();
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'dead', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'dead', cluster: 'dead', user: 'u' }],
      currentContext: 'dead',
    });
    const client = new KubeClient(kc, { observer: metrics.observer, rateLimit: false });
    await assert.rejects(client.fetch('/version'), { failure: 'network' });
    assert.deepEqual(
      metrics.requests.map((r) => [r.method, r.host, r.statusCode]),
      [['GET', '127.0.0.1:1', undefined]],
    );
  });

  it('handles and fetch wait for tokens of one limiter: burst at once, then qps', async () => {
    const clock = new FakeClock();
    const metrics = recorder();
    const client = new KubeClient(kubeConfig(), {
      rateLimit: { qps: 10, burst: 2 },
      clock,
      observer: metrics.observer,
    });
    received.length = 0;
    const handle = client.resource(namespaces);
    const calls: Promise<unknown>[] = [
      handle.get({ name: 'x' }),
      client.resource(namespaces).get({ name: 'x' }), // another handle, the same limiter
      handle.get({ name: 'x' }),
    ];
    await clock.advance(0);
    calls.push(client.fetch('/version')); // queues behind the same limiter
    await clock.advance(0);
    await Promise.all(calls.slice(0, 2));
    assert.equal(received.length, 2, 'only the burst reached the server');
    await clock.advance(100);
    await calls[2];
    assert.equal(received.length, 3);
    await clock.advance(100);
    await Promise.all(calls);
    assert.equal(received.length, 4);
    assert.deepEqual(
      metrics.waits.map((w) => w.durationSeconds),
      [0, 0, 0.1, 0.2],
    );
    assert.deepEqual(client.stats(), {
      requests: 4,
      throttledRequests: 2,
      rateLimiterWaitSeconds: 0.30000000000000004,
    });
    await client.close();
  });

  it("writes carry the client's fieldManager unless the call names another", async () => {
    const client = new KubeClient(kubeConfig(), { rateLimit: false, fieldManager: 'at-controller' });
    received.length = 0;
    const handle = client.resource<KubeObject & { echo?: unknown }>(ats);
    const result = await handle.status.patch(
      { namespace: 'ns', name: 'a' },
      { merge: { status: { phase: 'Done' } } },
      { resourceVersion: '42' },
    );
    const request = received[0];
    assert.equal(request?.method, 'PATCH');
    assert.equal(request.url, '/apis/example.com/v1/namespaces/ns/ats/a/status?fieldManager=at-controller');
    assert.equal(request.headers['content-type'], 'application/merge-patch+json');
    assert.deepEqual(JSON.parse(request.body), {
      status: { phase: 'Done' },
      metadata: { resourceVersion: '42' },
    });
    assert.deepEqual(result.echo, { status: { phase: 'Done' }, metadata: { resourceVersion: '42' } });

    await handle.create({ metadata: { namespace: 'ns', name: 'b' } }, { fieldManager: 'someone-else' });
    assert.equal(received[1]?.url, '/apis/example.com/v1/namespaces/ns/ats?fieldManager=someone-else');
    await client.close();
  });

  it("names the server without a trailing slash, and its host as the metrics' label", async () => {
    const client = new KubeClient(kubeConfig(), { rateLimit: false });
    assert.equal(client.server, `http://${host}`);
    assert.equal(client.host, host);
    assert.equal(client.fieldManager, undefined);
    assert.equal(new KubeClient(kubeConfig(), { fieldManager: 'me' }).fieldManager, 'me');
    await client.close();
  });

  it('fetch hands over any response as it is, and refuses a resource path', async () => {
    const client = new KubeClient(kubeConfig(), { rateLimit: false });
    const missing = await client.fetch('/readyz/missing', { headers: { Accept: 'application/json' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('content-type'), 'application/json');
    assert.equal(((await missing.json()) as { reason?: string }).reason, 'NotFound');
    for (const path of ['/api/v1/namespaces', '/apis/apps/v1/deployments?limit=1', '/api/v1/pods']) {
      await assert.rejects(client.fetch(path), { name: 'TypeError', message: /use client\.resource\(\)/ });
    }
    const empty = await client.fetch('/debug/empty');
    assert.deepEqual([empty.status, empty.body, empty.headers.get('x-note')], [204, null, 'none']);
    const cookies = await client.fetch('/debug/cookies');
    assert.equal(cookies.headers.get('set-cookie'), 'a=1, b=2');
    assert.equal(await cookies.text(), 'ok');
    const posted = await client.fetch('/debug/post', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Extra': 'yes' },
      body: '{"a":1}',
    });
    assert.deepEqual(((await posted.json()) as { echo: unknown }).echo, { a: 1 });
    const last = received.at(-1);
    assert.deepEqual([last?.method, last?.headers['x-extra'], last?.body], ['POST', 'yes', '{"a":1}']);
    // Discovery is no resource: the group and version lists stay reachable.
    for (const path of ['/api', '/apis', '/api/v1', '/apis/apps/v1', '/version', '/debug/api/v1/pods/x']) {
      assert.equal((await client.fetch(path)).status, 200, path);
    }
    await client.close();
  });
});
