import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
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
import { mergePatchStatus } from './patch.ts';

/**
 * A local HTTP stand-in for what reaches the wire through generated APIs and JSON requests; the
 * transport itself is tested in @loopwright/core, API semantics against the real API server in
 * client.int.test.ts.
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

describe('KubeClient', () => {
  it('generated APIs: credentials, user agent, metrics per request, typed errors', async () => {
    const metrics = recorder();
    const client = new KubeClient(kubeConfig(), { observer: metrics.observer, rateLimit: false });
    received.length = 0;
    const core = client.api(CoreV1Api);
    const namespace = await core.readNamespace({ name: 'x' });
    assert.equal(namespace.metadata?.name, 'x');
    const error: unknown = await core.readNamespace({ name: 'missing' }).catch((e: unknown) => e);
    assert.ok(error instanceof KubeApiError, 'generated API errors are KubeApiErrors');
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

  it('generated APIs and JSON requests wait for tokens of one limiter: burst at once, then qps', async () => {
    const clock = new FakeClock();
    const metrics = recorder();
    const client = new KubeClient(kubeConfig(), {
      rateLimit: { qps: 10, burst: 2 },
      clock,
      observer: metrics.observer,
    });
    received.length = 0;
    const core = client.api(CoreV1Api);
    const calls: Promise<unknown>[] = [
      core.readNamespace({ name: 'x' }),
      core.readNamespace({ name: 'x' }),
      core.readNamespace({ name: 'x' }),
    ];
    await clock.advance(0);
    calls.push(client.requestJson('GET', '/api/v1/namespaces/x')); // queues behind the same limiter
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

  it('requestJson sends exact bodies; mergePatchStatus targets /status with the merge-patch type and resourceVersion', async () => {
    const client = new KubeClient(kubeConfig(), { rateLimit: false });
    received.length = 0;
    const result = await mergePatchStatus<{ echo: unknown }>(
      client,
      { group: 'example.com', version: 'v1', plural: 'ats', namespace: 'ns', name: 'a' },
      { status: { phase: 'Done' } },
      { resourceVersion: '42', fieldManager: 'at-controller' },
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
    await assert.rejects(client.requestJson('GET', '/api/v1/namespaces/missing'), (e: unknown) =>
      isNotFound(e),
    );
    // fetch hands over an error response as it is.
    const missing = await client.fetch('/api/v1/namespaces/missing', {
      headers: { Accept: 'application/json' },
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('content-type'), 'application/json');
    assert.equal(((await missing.json()) as { reason?: string }).reason, 'NotFound');
    await client.close();
  });
});
