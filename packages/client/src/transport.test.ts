import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { KubeConfig } from '@kubernetes/client-node';
import { FakeClock } from '@loopwright/core/testing';
import { KubeApiError, KubeApiFailure } from './api-error.ts';
import { isConflict, isNotFound, isTooManyRequests } from './classify.ts';
import { REAPPLY_MS } from './applied-config.ts';
import { protobufObject, watchFrame } from './test-helpers/protobuf-encoding.ts';
import {
  BACKGROUND_MAX_WAIT_MS,
  BACKGROUND_QUIET_MS,
  KubeHttpsAgent,
  KubeTransport,
  MAX_ERROR_BODY_BYTES,
  type KubeTransportOptions,
  type RateLimiterWaitObservation,
  type RestRequestObservation,
} from './transport.ts';

// A tiny HTTP peer for what reaches the wire and how each answer is turned into a result or an error.
// Behaviour against the real API server is covered by the integration tests of the packages using it.
type Route = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
let route: Route;
let received: Received[];
let arrived: (() => void)[];
let connections = 0;
const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    for (const wake of arrived.splice(0)) wake();
    route(req, res, body);
  });
});
server.on('connection', () => connections++);
let host: string;
let kc: KubeConfig;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  kc = kubeConfig(`http://${host}/prefix/`);
});
beforeEach(() => {
  route = (_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Namespace"}');
  received = [];
  arrived = [];
});
after(() => {
  server.closeAllConnections();
  server.close();
});

function kubeConfig(serverUrl: string, token = 'the-token'): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'peer', server: serverUrl, skipTLSVerify: true }],
    users: [{ name: 'user', token }],
    contexts: [{ name: 'ctx', cluster: 'peer', user: 'user' }],
    currentContext: 'ctx',
  });
  return config;
}

function transport(options: KubeTransportOptions = {}, config = kc): KubeTransport {
  return new KubeTransport(config, { rateLimit: false, ...options });
}

/** Counts the calls of `config.applyToHTTPSOptions` from now on. */
function countApplications(config: KubeConfig): () => number {
  let calls = 0;
  const apply = config.applyToHTTPSOptions.bind(config);
  config.applyToHTTPSOptions = async (options) => {
    calls += 1;
    await apply(options);
  };
  return () => calls;
}

/** Resolves once `count` requests in total have reached the peer. */
async function requestsArrived(count: number): Promise<void> {
  while (received.length < count) await new Promise<void>((resolve) => arrived.push(resolve));
}

function statusBody(code: number, reason: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, ...extra });
}

async function rejection(promise: Promise<unknown>): Promise<KubeApiError> {
  const error: unknown = await promise.then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof KubeApiError, `a KubeApiError, got ${String(error)}`);
  return error;
}

async function collect(documents: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const document of documents) out.push(document);
  return out;
}

describe('KubeTransport requests', () => {
  it('sends below the server URL with the credentials of the KubeConfig and a user agent', async () => {
    const client = transport();
    const response = await client.request({ path: '/api/v1/namespaces/x?limit=1' });
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), '{"kind":"Namespace"}');
    assert.equal(received[0]?.url, '/prefix/api/v1/namespaces/x?limit=1');
    assert.equal(received[0].method, 'GET');
    assert.equal(received[0].headers.authorization, 'Bearer the-token');
    assert.equal(received[0].headers['user-agent'], 'loopwright');
    client.close();
  });

  it('percent-encodes what a URL would in a path that is not URL-safe, and sends the rest as given', async () => {
    const client = transport();
    await client.request({ path: '/a b/é?labelSelector=x in (a,b)' });
    await client.request({ path: "/api/v1/x?labelSelector=app%3Dy&fieldSelector=a!=b&limit=5&c=(d)'e" });
    assert.deepEqual(
      received.map((r) => r.url),
      [
        '/prefix/a%20b/%C3%A9?labelSelector=x%20in%20(a,b)',
        "/prefix/api/v1/x?labelSelector=app%3Dy&fieldSelector=a!=b&limit=5&c=(d)'e",
      ],
    );
    client.close();
  });

  it('applies the KubeConfig once for the requests of REAPPLY_MS: a rotated token is used a second later at most', async () => {
    const rotating = kubeConfig(`http://${host}`, 'first');
    const applications = countApplications(rotating);
    const clock = new FakeClock();
    const client = transport({ clock }, rotating);
    await Promise.all([client.request({ path: '/a' }), client.request({ path: '/b' })]);
    const user = rotating.getCurrentUser();
    assert.ok(user);
    (user as { token?: string }).token = 'second';
    clock.step(REAPPLY_MS - 1);
    await client.request({ path: '/c', headers: { Authorization: 'Bearer the-caller' } });
    clock.step(1);
    await client.request({ path: '/d', headers: { 'X-Caller': 'kept' } });
    assert.deepEqual(
      received.map((r) => [r.url, r.headers.authorization]),
      [
        ['/a', 'Bearer first'],
        ['/b', 'Bearer first'],
        // The KubeConfig's credentials go over the caller's, as client-node applies them.
        ['/c', 'Bearer first'],
        ['/d', 'Bearer second'],
      ],
    );
    assert.equal(received[3]?.headers['x-caller'], 'kept');
    assert.equal(applications(), 2);
    client.close();
  });

  it('does not keep a failed application: the next request applies the KubeConfig again', async () => {
    const failing = kubeConfig(`http://${host}`, 'token');
    const apply = failing.applyToHTTPSOptions.bind(failing);
    let fail = true;
    failing.applyToHTTPSOptions = async (options) => {
      if (fail) throw new Error('exec plugin failed');
      await apply(options);
    };
    const client = transport({ clock: new FakeClock() }, failing);
    const error = await rejection(client.request({ path: '/a' }));
    assert.match(error.message, /exec plugin failed/);
    fail = false;
    await client.request({ path: '/b' });
    assert.deepEqual(
      received.map((r) => [r.url, r.headers.authorization]),
      [['/b', 'Bearer token']],
    );
    client.close();
  });

  it('keeps the connection alive between requests', async () => {
    const client = transport();
    const opened = connections;
    await client.request({ path: '/a' });
    await client.request({ path: '/b' });
    await client.request({ path: '/c' });
    assert.equal(connections - opened, 1);
    client.close();
  });

  it('requestJson sends JSON with the content type asked for and parses the answer', async () => {
    route = (_req, res, body) =>
      res.writeHead(200).end(JSON.stringify({ echo: JSON.parse(body) as unknown }));
    const client = transport({ userAgent: 'at-scheduler' });
    const result = await client.requestJson<{ echo: unknown }>({
      method: 'patch',
      path: '/apis/example.com/v1/namespaces/ns/ats/a/status',
      body: { status: { phase: 'Done' } },
      contentType: 'application/merge-patch+json',
    });
    assert.deepEqual(result.echo, { status: { phase: 'Done' } });
    assert.equal(received[0]?.method, 'PATCH');
    assert.equal(received[0].headers['content-type'], 'application/merge-patch+json');
    assert.equal(received[0].headers.accept, 'application/json');
    assert.equal(received[0].headers['user-agent'], 'at-scheduler');
    route = (_req, res) => res.writeHead(200).end();
    assert.equal(await client.requestJson({ method: 'DELETE', path: '/x' }), undefined);
    client.close();
  });

  it('an error status becomes a KubeApiError with the Status, the request, and Retry-After in ms', async () => {
    route = (_req, res) =>
      res
        .writeHead(429, { 'content-type': 'application/json' })
        .end(statusBody(429, 'TooManyRequests', { message: 'slow down', details: { retryAfterSeconds: 3 } }));
    const client = transport();
    const error = await rejection(client.request({ method: 'PUT', path: '/apis/x/v1/things/a?dryRun=All' }));
    assert.equal(isTooManyRequests(error), true);
    assert.deepEqual(
      [error.failure, error.status, error.reason, error.statusMessage, error.retryAfterMs],
      [KubeApiFailure.Status, 429, 'TooManyRequests', 'slow down', 3000],
    );
    assert.deepEqual([error.method, error.path], ['PUT', '/prefix/apis/x/v1/things/a']);

    route = (_req, res) =>
      res.writeHead(409).end(statusBody(409, 'Conflict', { details: { name: 'a', kind: 'things' } }));
    const conflict = await rejection(client.requestJson({ method: 'PUT', path: '/a', body: {} }));
    assert.equal(isConflict(conflict), true);
    assert.equal(conflict.details?.name, 'a');

    route = (_req, res) => res.writeHead(502).end('<html>bad gateway</html>');
    const gateway = await rejection(client.request({ path: '/a' }));
    assert.deepEqual([gateway.status, gateway.reason], [502, '']);
    assert.match(gateway.message, /GET \/prefix\/a: HTTP 502: <html>bad gateway/);
    client.close();
  });

  it('send resolves with any status and its whole body, like fetch; no response still rejects', async () => {
    route = (_req, res) =>
      res.writeHead(404, { 'content-type': 'application/json' }).end(statusBody(404, 'NotFound'));
    const client = transport();
    const response = await client.send({ method: 'PATCH', path: '/apis/x/v1/things/a', body: 'a: 1' });
    assert.equal(response.status, 404);
    assert.equal(response.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(response.body.toString()), JSON.parse(statusBody(404, 'NotFound')));
    assert.equal(received[0]?.body, 'a: 1');
    const refused = transport({}, kubeConfig('http://127.0.0.1:1'));
    assert.equal((await rejection(refused.send({ path: '/version' }))).failure, KubeApiFailure.Network);
    refused.close();
    client.close();
  });

  it('reads at most MAX_ERROR_BODY_BYTES of an error body, and does not wait for its end', async () => {
    route = (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      // More than the limit, then the response stays open: a client reading to the end would hang.
      res.write('x'.repeat(MAX_ERROR_BODY_BYTES + 1024));
    };
    const client = transport();
    const error = await rejection(client.request({ path: '/huge' }));
    assert.equal(error.status, 500);
    assert.equal(error.reason, '');
    client.close();
  });

  it('a body cut off before its last byte is a network failure, not a short answer', async () => {
    route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"kind":');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const client = transport();
    const error = await rejection(client.request({ path: '/cut' }));
    assert.equal(error.failure, KubeApiFailure.Network);
    assert.equal(error.status, undefined);
    client.close();
  });

  it('a 2xx body that is not JSON is a decode failure', async () => {
    route = (_req, res) => res.writeHead(200).end('<html>login page</html>');
    const client = transport();
    const error = await rejection(client.requestJson({ path: '/api/v1/pods' }));
    assert.equal(error.failure, KubeApiFailure.Decode);
    assert.equal(error.status, 200);
    assert.ok(error.cause instanceof SyntaxError);
    client.close();
  });

  it('a refused connection is a network failure without a status, observed as such', async () => {
    const requests: RestRequestObservation[] = [];
    const client = transport(
      { observer: { observeRequest: (r) => requests.push(r) } },
      kubeConfig('http://127.0.0.1:1'),
    );
    const error = await rejection(client.request({ path: '/version' }));
    assert.equal(error.failure, KubeApiFailure.Network);
    assert.equal(error.status, undefined);
    assert.equal((error.cause as { code?: string }).code, 'ECONNREFUSED');
    assert.equal(isNotFound(error), false);
    assert.deepEqual(
      requests.map((r) => [r.method, r.host, r.path, r.statusCode]),
      [['GET', '127.0.0.1:1', '/version', undefined]],
    );
    client.close();
  });

  it('aborting fails the request as aborted, with the reason as cause', async () => {
    route = () => undefined; // never answers
    const client = transport();
    const abort = new AbortController();
    const pending = client.request({ path: '/slow', signal: abort.signal });
    await requestsArrived(1);
    const reason = new Error('shutting down');
    abort.abort(reason);
    const error = await rejection(pending);
    assert.equal(error.failure, KubeApiFailure.Aborted);
    assert.equal(error.cause, reason);
    const early = await rejection(client.request({ path: '/never', signal: AbortSignal.abort() }));
    assert.equal(early.failure, KubeApiFailure.Aborted);
    assert.equal(received.length, 1, 'an already aborted request is not sent');
    client.close();
  });

  it('timeoutMs fails a request without a complete response as a timeout', async () => {
    route = (_req, res) => {
      res.writeHead(200);
      res.write('{"items":['); // ...and never more
    };
    const clock = new FakeClock();
    const client = transport({ clock });
    let settled = false;
    const pending = rejection(client.request({ path: '/stuck', timeoutMs: 5_000 })).finally(() => {
      settled = true;
    });
    await requestsArrived(1);
    await clock.advance(4_999);
    assert.equal(settled, false);
    await clock.advance(1);
    const error = await pending;
    assert.equal(error.failure, KubeApiFailure.Timeout);
    assert.equal(error.status, undefined);
    client.close();
  });

  it('reports each request to the observer; a throwing observer does not fail requests', async () => {
    const requests: RestRequestObservation[] = [];
    const client = transport({ observer: { observeRequest: (r) => requests.push(r) } });
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: '{}' });
    route = (_req, res) => res.writeHead(404).end(statusBody(404, 'NotFound'));
    await rejection(client.request({ path: '/api/v1/namespaces/missing' }));
    assert.deepEqual(
      requests.map(({ method, host: h, path, statusCode }) => ({ method, host: h, path, statusCode })),
      [
        { method: 'POST', host, path: '/prefix/api/v1/namespaces', statusCode: 200 },
        { method: 'GET', host, path: '/prefix/api/v1/namespaces/missing', statusCode: 404 },
      ],
    );
    assert.ok(requests.every((r) => r.durationSeconds >= 0));
    assert.deepEqual(client.stats(), { requests: 2, throttledRequests: 0, rateLimiterWaitSeconds: 0 });
    const throwing = transport({
      observer: {
        observeRequest: () => {
          throw new Error('metrics broke');
        },
      },
    });
    route = (_req, res) => res.writeHead(200).end('{}');
    assert.deepEqual(await throwing.requestJson({ path: '/x' }), {});
    throwing.close();
    client.close();
  });
});

describe('KubeTransport rate limit', () => {
  it('every request waits for a token: burst at once, then one per 1/qps, waits reported', async () => {
    const clock = new FakeClock();
    const waits: RateLimiterWaitObservation[] = [];
    const client = transport({
      rateLimit: { qps: 10, burst: 2 },
      clock,
      observer: { observeRequest: () => undefined, observeRateLimiterWait: (w) => waits.push(w) },
    });
    const calls = [
      client.request({ path: '/1' }),
      client.request({ path: '/2' }),
      client.request({ path: '/3' }),
      client.request({ path: '/4' }),
    ];
    await requestsArrived(2);
    await clock.advance(0);
    assert.equal(received.length, 2, 'only the burst reached the server');
    await clock.advance(100);
    await calls[2];
    assert.equal(received.length, 3);
    await clock.advance(100);
    await Promise.all(calls);
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/1', '/prefix/2', '/prefix/3', '/prefix/4'],
      'in call order',
    );
    assert.deepEqual(
      waits.map((w) => [w.method, w.host, w.durationSeconds]),
      [
        ['GET', host, 0],
        ['GET', host, 0],
        ['GET', host, 0.1],
        ['GET', host, 0.2],
      ],
    );
    assert.deepEqual(client.stats(), {
      requests: 4,
      throttledRequests: 2,
      rateLimiterWaitSeconds: 0.30000000000000004,
    });
    client.close();
  });

  it("defaults to controller-runtime's 20 qps, burst 30", async () => {
    const clock = new FakeClock();
    const waits: RateLimiterWaitObservation[] = [];
    const client = new KubeTransport(kc, {
      clock,
      observer: { observeRequest: () => undefined, observeRateLimiterWait: (w) => waits.push(w) },
    });
    const calls = Array.from({ length: 31 }, () => client.request({ path: '/x' }));
    await clock.advance(0);
    assert.equal(waits.length, 30, 'the burst goes at once');
    await clock.advance(49);
    assert.equal(waits.length, 30, 'the 31st waits for the next token');
    await clock.advance(1);
    await Promise.all(calls);
    assert.equal(waits[30]?.durationSeconds, 0.05, 'one token every 1/20 s');
    client.close();
  });

  it("timeoutMs starts once the request has its token, as client-go's Request.Timeout: a throttled request is not timed out unsent", async () => {
    const clock = new FakeClock();
    const client = transport({ rateLimit: { qps: 1, burst: 1 }, clock });
    await client.request({ path: '/first' });
    let settled = false;
    const throttled = client.request({ path: '/throttled', timeoutMs: 500 }).finally(() => {
      settled = true;
    });
    await clock.advance(999);
    assert.equal(settled, false, 'waiting for its token, its deadline not yet running');
    await clock.advance(1);
    await throttled;
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/first', '/prefix/throttled'],
    );
    client.close();
  });

  it('a watch takes no token, as client-go does not rate-limit watches', async () => {
    const clock = new FakeClock();
    const client = transport({ rateLimit: { qps: 1, burst: 1 }, clock });
    await client.request({ path: '/first' });
    route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"BOOKMARK"}\n');
    };
    const watched = collect(client.watch({ path: '/w' }));
    // Real time for the round trip; the fake clock, which refills the bucket, stands still.
    const deadline = Date.now() + 2_000;
    while (received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/first', '/prefix/w'],
      'sent with no token left and no time passed',
    );
    assert.deepEqual(await watched, [{ type: 'BOOKMARK' }]);
    client.close();
  });

  it('a request aborted while waiting for its token is never sent and gives the token back', async () => {
    const clock = new FakeClock();
    const client = transport({ rateLimit: { qps: 1, burst: 1 }, clock });
    await client.request({ path: '/first' });
    const abort = new AbortController();
    const waiting = client.request({ path: '/cancelled', signal: abort.signal });
    abort.abort();
    assert.equal((await rejection(waiting)).failure, KubeApiFailure.Aborted);
    const next = client.request({ path: '/next' });
    await clock.advance(1000);
    await next;
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/first', '/prefix/next'],
    );
    assert.equal(client.stats().requests, 2);
    client.close();
  });
});

describe('KubeTransport priority', () => {
  it('a critical request waiting for a token goes before queued normal ones, background ones last', async () => {
    const clock = new FakeClock();
    const client = transport({ rateLimit: { qps: 10, burst: 1 }, clock });
    await client.request({ path: '/first' });
    const calls = [
      client.request({ path: '/event', priority: 'background' }),
      client.request({ path: '/claim-b' }),
      client.request({ path: '/create-a', priority: 'critical' }),
    ];
    await clock.advance(300);
    await Promise.all(calls);
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/first', '/prefix/create-a', '/prefix/claim-b', '/prefix/event'],
    );
    client.close();
  });
});

describe('KubeTransport background requests', () => {
  it('are sent only while no other request is on its way; an abort while waiting sends nothing', async () => {
    let release: (() => void) | undefined;
    route = (req, res) => {
      const answer = (): void => void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      if (req.url === '/prefix/slow') release = answer;
      else answer();
    };
    const client = transport();
    const slow = client.request({ path: '/slow' });
    await requestsArrived(1);
    const event = client.request({ path: '/event', priority: 'background' });
    const abort = new AbortController();
    const abandoned = client.request({ path: '/abandoned', priority: 'background', signal: abort.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/slow'],
      'held back while /slow is unanswered',
    );
    abort.abort();
    assert.equal((await rejection(abandoned)).failure, KubeApiFailure.Aborted);
    release?.();
    await slow;
    await event;
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/slow', '/prefix/event'],
    );
    // Nothing else on its way: sent at once.
    await client.request({ path: '/event-2', priority: 'background' });
    assert.equal(received.length, 3);
    client.close();
  });
});

describe('KubeTransport background quiet period', () => {
  it('a background request waits until nothing else has been on its way for BACKGROUND_QUIET_MS', async () => {
    const clock = new FakeClock();
    const client = transport({ clock });
    await client.request({ path: '/claim' });
    const event = client.request({ path: '/event', priority: 'background' });
    await clock.advance(BACKGROUND_QUIET_MS - 1);
    assert.equal(received.length, 1, 'held back: the burst may go on');
    // Another request of the burst starts the quiet period over.
    await client.request({ path: '/create' });
    await clock.advance(BACKGROUND_QUIET_MS - 1);
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/claim', '/prefix/create'],
    );
    await clock.advance(1);
    await event;
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/claim', '/prefix/create', '/prefix/event'],
    );
    assert.equal(clock.pendingTimers(), 0);
    client.close();
  });
});

describe('KubeTransport background starvation', () => {
  it('steady requests with gaps longer than the quiet period do not starve a background request', async () => {
    const clock = new FakeClock();
    const client = transport({ clock });
    const first = client.request({ path: '/poll-0' });
    const event = client.request({ path: '/event', priority: 'background' });
    await first;
    for (let i = 1; i <= 3; i++) {
      await clock.advance(50);
      await client.request({ path: `/poll-${i}` });
    }
    await event;
    assert.deepEqual(
      received.map((r) => r.url),
      ['/prefix/poll-0', '/prefix/event', '/prefix/poll-1', '/prefix/poll-2', '/prefix/poll-3'],
    );
    client.close();
  });
});

describe('KubeTransport background requests on a transport that is never quiet', () => {
  it('are sent after BACKGROUND_MAX_WAIT_MS anyway: late, never starved', async () => {
    const clock = new FakeClock();
    const client = transport({ clock });
    const first = client.request({ path: '/reconcile-0' });
    let sentAtMs: number | undefined;
    const event = client.request({ path: '/event', priority: 'background' }).then(() => {
      sentAtMs = clock.now();
    });
    await first;
    // A busy controller: a new request every 10 ms, so the transport is never quiet for 20 ms.
    for (let i = 1; sentAtMs === undefined && i <= 1_000; i++) {
      await clock.advance(10);
      await client.request({ path: `/reconcile-${i}` });
    }
    assert.notEqual(sentAtMs, undefined, 'sent while the load went on');
    await event;
    assert.ok(
      sentAtMs !== undefined && sentAtMs >= BACKGROUND_MAX_WAIT_MS && sentAtMs <= BACKGROUND_MAX_WAIT_MS + 10,
      `sent once it had waited ${BACKGROUND_MAX_WAIT_MS} ms, not before or much after: ${sentAtMs}`,
    );
    assert.equal(clock.pendingTimers(), 0);
    client.close();
  });
});

describe('KubeTransport retries (client-go checkWait)', () => {
  it('sends the same request again after Retry-After when the server answers 429 or a 5xx with it', async () => {
    const clock = new FakeClock();
    const answers = [
      [429, '2'],
      [503, '1'],
    ];
    route = (_req, res) => {
      const [status, retryAfter] = answers.shift() ?? [200, undefined];
      if (retryAfter === undefined)
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}');
      else res.writeHead(Number(status), { 'retry-after': String(retryAfter) }).end('{}');
    };
    const client = transport({ clock });
    const call = client.requestJson<{ ok: number }>({ method: 'POST', path: '/pods', body: { a: 1 } });
    await requestsArrived(1);
    await clock.advance(1999);
    assert.equal(received.length, 1, 'waits the whole Retry-After');
    await clock.advance(1);
    await requestsArrived(2);
    await clock.advance(1000);
    assert.deepEqual(await call, { ok: 1 });
    assert.deepEqual(
      received.map((r) => [r.method, r.body]),
      [
        ['POST', '{"a":1}'],
        ['POST', '{"a":1}'],
        ['POST', '{"a":1}'],
      ],
    );
    assert.equal(client.stats().requests, 3);
    client.close();
  });

  it('returns a 5xx without Retry-After at once, and the 11th answer after 10 retries', async () => {
    const clock = new FakeClock({ autoAdvance: true });
    route = (_req, res) => res.writeHead(500).end(statusBody(500, 'InternalError'));
    const client = transport({ clock });
    assert.equal((await rejection(client.request({ path: '/a' }))).status, 500);
    assert.equal(received.length, 1);
    route = (_req, res) => res.writeHead(429, { 'retry-after': '0' }).end(statusBody(429, 'TooManyRequests'));
    assert.equal((await rejection(client.request({ path: '/b' }))).status, 429);
    assert.equal(received.length, 1 + 11);
    client.close();
  });

  it('aborting while waiting to retry fails the request as aborted, without sending it again', async () => {
    const clock = new FakeClock();
    route = (_req, res) => res.writeHead(429, { 'retry-after': '5' }).end(statusBody(429, 'TooManyRequests'));
    const client = transport({ clock });
    const abort = new AbortController();
    const call = client.request({ path: '/a', signal: abort.signal });
    await requestsArrived(1);
    await clock.advance(1000);
    abort.abort();
    assert.equal((await rejection(call)).failure, KubeApiFailure.Aborted);
    await clock.advance(10_000);
    assert.equal(received.length, 1);
    client.close();
  });
});

describe('KubeTransport watch', () => {
  it('yields each JSON line, whatever the chunking, and ends with the response', async () => {
    const lines = [
      { type: 'ADDED', object: { metadata: { name: 'a' } } },
      { type: 'BOOKMARK', object: { metadata: { resourceVersion: '150' } } },
      { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } },
    ];
    route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = lines.map((line) => JSON.stringify(line)).join('\n') + '\n\n';
      let offset = 0;
      const dribble = (): void => {
        if (offset >= text.length) {
          res.end();
          return;
        }
        res.write(text.slice(offset, offset + 7));
        offset += 7;
        setImmediate(dribble);
      };
      dribble();
    };
    const client = transport();
    assert.deepEqual(await collect(client.watch({ path: '/api/v1/pods?watch=1' })), lines);
    client.close();
  });

  it('an error status fails the watch before any document', async () => {
    route = (_req, res) => res.writeHead(410).end(statusBody(410, 'Expired'));
    const client = transport();
    const error = await rejection(collect(client.watch({ path: '/api/v1/pods?watch=1' })));
    assert.deepEqual([error.status, error.reason], [410, 'Expired']);
    client.close();
  });

  it('fails when nothing arrives for idleTimeoutMs, before or after the headers', async () => {
    const clock = new FakeClock();
    const client = transport({ clock });
    route = () => undefined; // no headers ever
    const silentServer = rejection(collect(client.watch({ path: '/w', idleTimeoutMs: 1_000 })));
    await requestsArrived(1);
    await clock.advance(1_000);
    assert.equal((await silentServer).failure, KubeApiFailure.Timeout);

    route = (_req, res) => {
      res.writeHead(200);
      res.write('{"type":"BOOKMARK"}\n'); // ...then silence, like a half-open connection
    };
    const documents: unknown[] = [];
    const halfOpen = rejection(
      (async () => {
        for await (const document of client.watch({ path: '/w', idleTimeoutMs: 1_000 }))
          documents.push(document);
      })(),
    );
    await requestsArrived(2);
    while (documents.length === 0) await clock.advance(0);
    await clock.advance(999);
    assert.equal(clock.pendingTimers(), 1, 'still waiting');
    await clock.advance(1);
    assert.equal((await halfOpen).failure, KubeApiFailure.Timeout);
    assert.deepEqual(documents, [{ type: 'BOOKMARK' }]);
    client.close();
  });

  it('a watch sent again after a 429 lives while data flows: no idle timer of the first attempt fires', async () => {
    const clock = new FakeClock();
    let stream: http.ServerResponse | undefined;
    route = (_req, res) => {
      if (received.length === 1) {
        res.writeHead(429, { 'retry-after': '1' }).end(statusBody(429, 'TooManyRequests'));
        return;
      }
      res.writeHead(200).flushHeaders();
      stream = res;
    };
    const client = transport({ clock });
    const documents: unknown[] = [];
    let failed: unknown;
    const watching = (async () => {
      for await (const document of client.watch({ path: '/w', idleTimeoutMs: 3_000 }))
        documents.push(document);
    })().catch((error: unknown) => {
      failed = error;
    });
    await requestsArrived(1);
    await clock.advance(1_000);
    await requestsArrived(2);
    // A line every 500 ms for 5 s: well past 3 s after the 429, and never 3 s of silence.
    for (let n = 1; n <= 10; n++) {
      stream?.write(`{"n":${n}}\n`);
      while (documents.length < n && failed === undefined) await clock.advance(0);
      assert.equal(failed, undefined, `still watching at line ${n}`);
      await clock.advance(500);
    }
    stream?.end();
    await watching;
    assert.equal(failed, undefined);
    assert.equal(documents.length, 10);
    assert.equal(clock.pendingTimers(), 0, 'no idle timer of an earlier attempt left behind');
    client.close();
  });

  it('a Retry-After longer than idleTimeoutMs is waited out: no idle timeout while waiting to retry', async () => {
    const clock = new FakeClock();
    route = (_req, res) => {
      if (received.length === 1)
        res.writeHead(429, { 'retry-after': '5' }).end(statusBody(429, 'TooManyRequests'));
      else res.writeHead(200).end('{"n":1}\n');
    };
    const client = transport({ clock });
    const watching = collect(client.watch({ path: '/w', idleTimeoutMs: 1_000 }));
    await requestsArrived(1);
    await clock.advance(5_000);
    assert.deepEqual(await watching, [{ n: 1 }]);
    assert.equal(received.length, 2);
    client.close();
  });

  it('a connection cut in the middle of a line is a network failure', async () => {
    route = (req, res) => {
      res.writeHead(200);
      res.write('{"type":"ADDED"}\n{"type":"ADD');
      setImmediate(() => req.socket.destroy());
    };
    const client = transport();
    const documents: unknown[] = [];
    const error = await rejection(
      (async () => {
        for await (const document of client.watch({ path: '/w' })) documents.push(document);
      })(),
    );
    assert.equal(error.failure, KubeApiFailure.Network);
    assert.deepEqual(documents, [{ type: 'ADDED' }]);
    client.close();
  });

  it('a line that is not JSON is a decode failure', async () => {
    route = (_req, res) => res.writeHead(200).end('{"type":"ADDED"}\nnot json\n');
    const client = transport();
    assert.equal((await rejection(collect(client.watch({ path: '/w' })))).failure, KubeApiFailure.Decode);
    client.close();
  });

  it('stopping the iteration early closes the connection', async () => {
    let closed: Promise<void> = Promise.resolve();
    route = (req, res) => {
      closed = new Promise((resolve) => {
        req.socket.on('close', () => {
          resolve();
        });
      });
      res.writeHead(200);
      res.write('{"n":1}\n{"n":2}\n');
    };
    const client = transport();
    for await (const document of client.watch({ path: '/w' })) {
      assert.deepEqual(document, { n: 1 });
      break;
    }
    await closed;
    client.close();
  });

  it('aborting ends the watch with an aborted failure', async () => {
    route = (_req, res) => {
      res.writeHead(200);
      res.write('{"n":1}\n');
    };
    const client = transport();
    const abort = new AbortController();
    const error = await rejection(
      (async () => {
        for await (const document of client.watch({ path: '/w', signal: abort.signal })) {
          assert.deepEqual(document, { n: 1 });
          abort.abort();
        }
      })(),
    );
    assert.equal(error.failure, KubeApiFailure.Aborted);
    client.close();
  });
});

describe('KubeTransport protobuf', () => {
  const PROTOBUF = 'application/vnd.kubernetes.protobuf';

  /** A `metav1.Status` message as the API server encodes a 404's. */
  function notFoundStatus(): Uint8Array {
    const writer = new BinaryWriter();
    writer.tag(1, WireType.LengthDelimited).fork().join();
    writer.tag(2, WireType.LengthDelimited).string('Failure');
    writer.tag(3, WireType.LengthDelimited).string('pods "a" not found');
    writer.tag(4, WireType.LengthDelimited).string('NotFound');
    writer.tag(5, WireType.LengthDelimited).fork();
    writer.tag(1, WireType.LengthDelimited).string('a');
    writer.tag(3, WireType.LengthDelimited).string('pods');
    writer.join();
    writer.tag(6, WireType.Varint).int32(404);
    return protobufObject('v1', 'Status', writer.finish());
  }

  it('a protobuf watch asks for protobuf and yields each frame, whatever the chunking', async () => {
    const payloads = ['first event', '', 'a third, longer event '.repeat(20)].map((text) =>
      Buffer.from(text),
    );
    route = (_req, res) => {
      res.writeHead(200, { 'content-type': `${PROTOBUF};stream=watch` });
      const stream = Buffer.concat(payloads.map((payload) => watchFrame(payload)));
      // Cut everywhere: inside length prefixes, inside frames, across frame boundaries.
      const cuts = [1, 3, 6, 17, 18, 19, 25, 100, stream.length];
      let offset = 0;
      const dribble = (): void => {
        const cut = cuts.shift();
        if (cut === undefined) {
          res.end();
          return;
        }
        res.write(stream.subarray(offset, cut));
        offset = cut;
        setTimeout(dribble, 1);
      };
      dribble();
    };
    const client = transport();
    const frames = await collect(client.watch({ path: '/api/v1/pods?watch=1', protobuf: true }));
    assert.ok(frames.every((f) => Buffer.isBuffer(f)));
    assert.deepEqual(
      frames.map((f) => f.toString()),
      payloads.map((p) => p.toString()),
    );
    assert.equal(received[0]?.url, '/prefix/api/v1/pods?watch=1');
    assert.equal(received[0].headers.accept, PROTOBUF);
    client.close();
  });

  it('a watch answered in JSON when protobuf was asked for is a decode failure', async () => {
    route = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"ADDED","object":{}}\n');
    const client = transport();
    const error = await rejection(
      collect(client.watch({ path: '/apis/x/v1/things?watch=1', protobuf: true })),
    );
    assert.equal(error.failure, KubeApiFailure.Decode);
    assert.equal(error.status, 200);
    assert.match(error.message, /asked for protobuf, the server sent application\/json/);
    client.close();
  });

  it('a protobuf watch whose stream ends in the middle of a frame is a network failure', async () => {
    route = (_req, res) => {
      res.writeHead(200, { 'content-type': `${PROTOBUF};stream=watch` });
      res.end(Buffer.concat([watchFrame('whole'), watchFrame('cut short').subarray(0, 7)]));
    };
    const client = transport();
    const frames: unknown[] = [];
    const error = await rejection(
      (async () => {
        for await (const f of client.watch({ path: '/w', protobuf: true })) frames.push(f);
      })(),
    );
    assert.equal(error.failure, KubeApiFailure.Network);
    assert.equal(error.status, undefined);
    assert.match(error.message, /stream ended in the middle of a frame/);
    assert.deepEqual(
      frames.map((f) => (f as Buffer).toString()),
      ['whole'],
    );
    client.close();
  });

  it('an error response with a protobuf Status gives its reason, message, code and details', async () => {
    route = (_req, res) => res.writeHead(404, { 'content-type': PROTOBUF }).end(notFoundStatus());
    const client = transport();
    const error = await rejection(client.request({ path: '/api/v1/namespaces/ns/pods/a' }));
    assert.equal(isNotFound(error), true);
    assert.deepEqual(
      [error.failure, error.status, error.reason, error.statusMessage, error.details],
      [KubeApiFailure.Status, 404, 'NotFound', 'pods "a" not found', { name: 'a', kind: 'pods' }],
    );
    assert.deepEqual([error.method, error.path], ['GET', '/prefix/api/v1/namespaces/ns/pods/a']);

    const watchError = await rejection(
      collect(client.watch({ path: '/api/v1/pods?watch=1', protobuf: true })),
    );
    assert.deepEqual(
      [watchError.failure, watchError.status, watchError.reason, watchError.statusMessage],
      [KubeApiFailure.Status, 404, 'NotFound', 'pods "a" not found'],
    );
    client.close();
  });

  it('an error response in protobuf that is not a Status is said to be so', async () => {
    const body = Buffer.from('not an object');
    route = (_req, res) => res.writeHead(500, { 'content-type': PROTOBUF }).end(body);
    const client = transport();
    const error = await rejection(client.request({ path: '/api/v1/pods' }));
    assert.deepEqual([error.failure, error.status, error.reason], [KubeApiFailure.Status, 500, '']);
    assert.match(error.message, /HTTP 500: \(13 bytes of protobuf, not a Status\)/);

    const pod = protobufObject('v1', 'Pod', Uint8Array.of(0x0a, 0x00));
    route = (_req, res) => res.writeHead(500, { 'content-type': PROTOBUF }).end(pod);
    const other = await rejection(client.request({ path: '/api/v1/pods' }));
    assert.deepEqual([other.status, other.reason], [500, '']);
    assert.match(other.message, new RegExp(`\\(${pod.length} bytes of protobuf, not a Status\\)`));
    client.close();
  });
});

describe('KubeHttpsAgent connection pools', () => {
  const pem = (text: string): Buffer => Buffer.from(`-----BEGIN CERTIFICATE-----\n${text}\n`);
  const options = (ca: string, cert: string, extra: Record<string, unknown> = {}) => ({
    host: 'api.example',
    port: 6443,
    ca: pem(ca),
    cert: pem(cert),
    key: pem('key'),
    ...extra,
  });

  it('names one pool for equal credentials, though each request carries new Buffers, without their PEMs', () => {
    const agent = new KubeHttpsAgent();
    const name = agent.getName(options('ca', 'cert'));
    assert.equal(agent.getName(options('ca', 'cert')), name);
    assert.equal(agent.getName({ ...options('ca', 'cert'), ca: pem('ca').toString() }), name);
    assert.ok(name.length < 100, `a short name, got ${name.length} characters`);
    agent.destroy();
  });

  it('leaves the options it names as they were, and names frozen or null-prototype ones alike', () => {
    const agent = new KubeHttpsAgent();
    const name = agent.getName(options('ca', 'cert'));
    // As Node's addRequest passes them: a null-prototype copy, here without a key.
    const given: Record<string, unknown> = { __proto__: null, ...options('ca', 'cert'), key: undefined };
    delete given.key;
    const ca = given.ca;
    const withoutKey = agent.getName(given);
    assert.notEqual(withoutKey, name);
    assert.deepEqual(Object.keys(given), ['host', 'port', 'ca', 'cert']);
    assert.equal(given.ca, ca);
    assert.equal(agent.getName(Object.freeze(options('ca', 'cert'))), name);
    assert.equal(agent.getName(Object.freeze({ ...given })), withoutKey);
    agent.destroy();
  });

  it('gives other credentials, servers or TLS settings a pool of their own', () => {
    const agent = new KubeHttpsAgent();
    const names = [
      agent.getName(options('ca', 'cert')),
      agent.getName(options('ca', 'rotated cert')),
      agent.getName(options('other ca', 'cert')),
      agent.getName({ ...options('ca', 'cert'), key: pem('other key') }),
      agent.getName({ ...options('ca', 'cert'), key: undefined }),
      agent.getName(options('ca', 'cert', { port: 443 })),
      agent.getName(options('ca', 'cert', { host: 'other.example' })),
      agent.getName(options('ca', 'cert', { servername: 'kubernetes' })),
      agent.getName(options('ca', 'cert', { rejectUnauthorized: false })),
      agent.getName({ ...options('ca', 'cert'), ca: [pem('ca'), pem('second ca')] }),
      // The rest of what Node names a pool by, which a KubeConfig does not set but a caller may.
      agent.getName(options('ca', 'cert', { localAddress: '127.0.0.2' })),
      agent.getName(options('ca', 'cert', { family: 6 })),
      agent.getName(options('ca', 'cert', { ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' })),
      agent.getName(options('ca', 'cert', { minVersion: 'TLSv1.3' })),
      agent.getName(options('ca', 'cert', { maxVersion: 'TLSv1.2' })),
      agent.getName(options('ca', 'cert', { pfx: pem('pfx') })),
      agent.getName(options('ca', 'cert', { crl: pem('crl') })),
      agent.getName(options('ca', 'cert', { secureOptions: 4 })),
      agent.getName(options('ca', 'cert', { sigalgs: 'ecdsa_secp256r1_sha256' })),
    ];
    assert.equal(new Set(names).size, names.length, names.join('\n'));
    // The first credentials are still known: a request with them reuses their pool.
    assert.equal(agent.getName(options('ca', 'cert')), names[0]);
    agent.destroy();
  });
});
