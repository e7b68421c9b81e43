// KubeTransport's requests, rate limit and retries, against a local peer.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { FakeClock } from '@loopwright/core/testing';
import { KubeApiFailure } from './api-error.ts';
import { isConflict, isNotFound, isTooManyRequests } from './classify.ts';
import { REAPPLY_MS } from './applied-config.ts';
import type { RateLimiterWaitObservation, RestRequestObservation } from './kube-request.ts';
import { MAX_ERROR_BODY_BYTES } from './response.ts';
import { KubeTransport } from './transport.ts';
import {
  collect,
  kubeConfig,
  rejection,
  statusBody,
  unlimitedTransport,
  wirePeer,
} from './wire-peer.test-support.ts';
import { KubeConfig } from '@kubernetes/client-node';

const peer = wirePeer();

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

describe('KubeTransport requests', () => {
  it('sends below the server URL with the credentials of the KubeConfig and a user agent', async () => {
    const client = unlimitedTransport(peer.kc);
    const response = await client.request({ path: '/api/v1/namespaces/x?limit=1' });
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), '{"kind":"Namespace"}');
    assert.equal(peer.received[0]?.url, '/prefix/api/v1/namespaces/x?limit=1');
    assert.equal(peer.received[0].method, 'GET');
    assert.equal(peer.received[0].headers.authorization, 'Bearer the-token');
    assert.equal(peer.received[0].headers['user-agent'], 'loopwright');
    client.close();
  });

  it('percent-encodes what a URL would in a path that is not URL-safe, and sends the rest as given', async () => {
    const client = unlimitedTransport(peer.kc);
    await client.request({ path: '/a b/é?labelSelector=x in (a,b)' });
    await client.request({ path: "/api/v1/x?labelSelector=app%3Dy&fieldSelector=a!=b&limit=5&c=(d)'e" });
    assert.deepEqual(
      peer.received.map((r) => r.url),
      [
        '/prefix/a%20b/%C3%A9?labelSelector=x%20in%20(a,b)',
        "/prefix/api/v1/x?labelSelector=app%3Dy&fieldSelector=a!=b&limit=5&c=(d)'e",
      ],
    );
    client.close();
  });

  it('applies the KubeConfig once for the requests of REAPPLY_MS: a rotated token is used a second later at most', async () => {
    const rotating = kubeConfig(`http://${peer.host}`, 'first');
    const applications = countApplications(rotating);
    const clock = new FakeClock();
    const client = unlimitedTransport(rotating, { clock });
    await Promise.all([client.request({ path: '/a' }), client.request({ path: '/b' })]);
    const user = rotating.getCurrentUser();
    assert.ok(user);
    (user as { token?: string }).token = 'second';
    clock.step(REAPPLY_MS - 1);
    await client.request({ path: '/c', headers: { Authorization: 'Bearer the-caller' } });
    clock.step(1);
    await client.request({ path: '/d', headers: { 'X-Caller': 'kept' } });
    assert.deepEqual(
      peer.received.map((r) => [r.url, r.headers.authorization]),
      [
        ['/a', 'Bearer first'],
        ['/b', 'Bearer first'],
        // The KubeConfig's credentials go over the caller's, as client-node applies them.
        ['/c', 'Bearer first'],
        ['/d', 'Bearer second'],
      ],
    );
    assert.equal(peer.received[3]?.headers['x-caller'], 'kept');
    assert.equal(applications(), 2);
    client.close();
  });

  it('does not keep a failed application: the next request applies the KubeConfig again', async () => {
    const failing = kubeConfig(`http://${peer.host}`, 'token');
    const apply = failing.applyToHTTPSOptions.bind(failing);
    let fail = true;
    failing.applyToHTTPSOptions = async (options) => {
      if (fail) throw new Error('exec plugin failed');
      await apply(options);
    };
    const client = unlimitedTransport(failing, { clock: new FakeClock() });
    const error = await rejection(client.request({ path: '/a' }));
    assert.match(error.message, /exec plugin failed/);
    fail = false;
    await client.request({ path: '/b' });
    assert.deepEqual(
      peer.received.map((r) => [r.url, r.headers.authorization]),
      [['/b', 'Bearer token']],
    );
    client.close();
  });

  it('keeps the connection alive between requests', async () => {
    const client = unlimitedTransport(peer.kc);
    const opened = peer.connections;
    await client.request({ path: '/a' });
    await client.request({ path: '/b' });
    await client.request({ path: '/c' });
    assert.equal(peer.connections - opened, 1);
    client.close();
  });

  it('requestJson sends JSON with the content type asked for and parses the answer', async () => {
    peer.route = (_req, res, body) =>
      res.writeHead(200).end(JSON.stringify({ echo: JSON.parse(body) as unknown }));
    const client = unlimitedTransport(peer.kc, { userAgent: 'at-scheduler' });
    const result = await client.requestJson<{ echo: unknown }>({
      method: 'patch',
      path: '/apis/example.com/v1/namespaces/ns/ats/a/status',
      body: { status: { phase: 'Done' } },
      contentType: 'application/merge-patch+json',
    });
    assert.deepEqual(result.echo, { status: { phase: 'Done' } });
    assert.equal(peer.received[0]?.method, 'PATCH');
    assert.equal(peer.received[0].headers['content-type'], 'application/merge-patch+json');
    assert.equal(peer.received[0].headers.accept, 'application/json');
    assert.equal(peer.received[0].headers['user-agent'], 'at-scheduler');
    peer.route = (_req, res) => res.writeHead(200).end();
    assert.equal(await client.requestJson({ method: 'DELETE', path: '/x' }), undefined);
    client.close();
  });

  it('an error status becomes a KubeApiError with the Status, the request, and Retry-After in ms', async () => {
    peer.route = (_req, res) =>
      res
        .writeHead(429, { 'content-type': 'application/json' })
        .end(statusBody(429, 'TooManyRequests', { message: 'slow down', details: { retryAfterSeconds: 3 } }));
    const client = unlimitedTransport(peer.kc);
    const error = await rejection(client.request({ method: 'PUT', path: '/apis/x/v1/things/a?dryRun=All' }));
    assert.equal(isTooManyRequests(error), true);
    assert.deepEqual(
      [error.failure, error.status, error.reason, error.statusMessage, error.retryAfterMs],
      [KubeApiFailure.Status, 429, 'TooManyRequests', 'slow down', 3000],
    );
    assert.deepEqual([error.method, error.path], ['PUT', '/prefix/apis/x/v1/things/a']);

    peer.route = (_req, res) =>
      res.writeHead(409).end(statusBody(409, 'Conflict', { details: { name: 'a', kind: 'things' } }));
    const conflict = await rejection(client.requestJson({ method: 'PUT', path: '/a', body: {} }));
    assert.equal(isConflict(conflict), true);
    assert.equal(conflict.details?.name, 'a');

    peer.route = (_req, res) => res.writeHead(502).end('<html>bad gateway</html>');
    const gateway = await rejection(client.request({ path: '/a' }));
    assert.deepEqual([gateway.status, gateway.reason], [502, '']);
    assert.match(gateway.message, /GET \/prefix\/a: HTTP 502: <html>bad gateway/);
    client.close();
  });

  it('send resolves with any status and its whole body, like fetch; no response still rejects', async () => {
    peer.route = (_req, res) =>
      res.writeHead(404, { 'content-type': 'application/json' }).end(statusBody(404, 'NotFound'));
    const client = unlimitedTransport(peer.kc);
    const response = await client.send({ method: 'PATCH', path: '/apis/x/v1/things/a', body: 'a: 1' });
    assert.equal(response.status, 404);
    assert.equal(response.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(response.body.toString()), JSON.parse(statusBody(404, 'NotFound')));
    assert.equal(peer.received[0]?.body, 'a: 1');
    const refused = unlimitedTransport(kubeConfig('http://127.0.0.1:1'));
    assert.equal((await rejection(refused.send({ path: '/version' }))).failure, KubeApiFailure.Network);
    refused.close();
    client.close();
  });

  it('reads at most MAX_ERROR_BODY_BYTES of an error body, and does not wait for its end', async () => {
    peer.route = (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      // More than the limit, then the response stays open: a client reading to the end would hang.
      res.write('x'.repeat(MAX_ERROR_BODY_BYTES + 1024));
    };
    const client = unlimitedTransport(peer.kc);
    const error = await rejection(client.request({ path: '/huge' }));
    assert.equal(error.status, 500);
    assert.equal(error.reason, '');
    client.close();
  });

  it('an error body of exactly MAX_ERROR_BODY_BYTES is read whole, without waiting for its end', async () => {
    peer.route = (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write('x'.repeat(MAX_ERROR_BODY_BYTES)); // ...and the response stays open
    };
    const client = unlimitedTransport(peer.kc);
    const error = await rejection(client.request({ path: '/exact' }));
    assert.equal(error.status, 500);
    assert.ok(error.message.includes('x'.repeat(100)));
    client.close();
  });

  it('a body cut off before its last byte is a network failure, not a short answer', async () => {
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"kind":');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const client = unlimitedTransport(peer.kc);
    const error = await rejection(client.request({ path: '/cut' }));
    assert.equal(error.failure, KubeApiFailure.Network);
    assert.equal(error.status, undefined);
    client.close();
  });

  it('a 2xx body that is not JSON is a decode failure', async () => {
    peer.route = (_req, res) => res.writeHead(200).end('<html>login page</html>');
    const client = unlimitedTransport(peer.kc);
    const error = await rejection(client.requestJson({ path: '/api/v1/pods' }));
    assert.equal(error.failure, KubeApiFailure.Decode);
    assert.equal(error.status, 200);
    assert.ok(error.cause instanceof SyntaxError);
    client.close();
  });

  it('a refused connection is a network failure without a status, observed as such', async () => {
    const requests: RestRequestObservation[] = [];
    const client = unlimitedTransport(kubeConfig('http://127.0.0.1:1'), {
      observer: { observeRequest: (r) => requests.push(r) },
    });
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
    peer.route = () => undefined; // never answers
    const client = unlimitedTransport(peer.kc);
    const abort = new AbortController();
    const pending = client.request({ path: '/slow', signal: abort.signal });
    await peer.requestsArrived(1);
    const reason = new Error('shutting down');
    abort.abort(reason);
    const error = await rejection(pending);
    assert.equal(error.failure, KubeApiFailure.Aborted);
    assert.equal(error.cause, reason);
    const early = await rejection(client.request({ path: '/never', signal: AbortSignal.abort() }));
    assert.equal(early.failure, KubeApiFailure.Aborted);
    assert.equal(peer.received.length, 1, 'an already aborted request is not sent');
    client.close();
  });

  it('timeoutMs fails a request without a complete response as a timeout', async () => {
    peer.route = (_req, res) => {
      res.writeHead(200);
      res.write('{"items":['); // ...and never more
    };
    const clock = new FakeClock();
    const client = unlimitedTransport(peer.kc, { clock });
    let settled = false;
    const pending = rejection(client.request({ path: '/stuck', timeoutMs: 5_000 })).finally(() => {
      settled = true;
    });
    await peer.requestsArrived(1);
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
    const client = unlimitedTransport(peer.kc, { observer: { observeRequest: (r) => requests.push(r) } });
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: '{}' });
    peer.route = (_req, res) => res.writeHead(404).end(statusBody(404, 'NotFound'));
    await rejection(client.request({ path: '/api/v1/namespaces/missing' }));
    assert.deepEqual(
      requests.map(({ method, host: h, path, statusCode }) => ({ method, host: h, path, statusCode })),
      [
        { method: 'POST', host: peer.host, path: '/prefix/api/v1/namespaces', statusCode: 200 },
        { method: 'GET', host: peer.host, path: '/prefix/api/v1/namespaces/missing', statusCode: 404 },
      ],
    );
    assert.ok(requests.every((r) => r.durationSeconds >= 0));
    assert.deepEqual(client.stats(), { requests: 2, throttledRequests: 0, rateLimiterWaitSeconds: 0 });
    const throwing = unlimitedTransport(peer.kc, {
      observer: {
        observeRequest: () => {
          throw new Error('metrics broke');
        },
      },
    });
    peer.route = (_req, res) => res.writeHead(200).end('{}');
    assert.deepEqual(await throwing.requestJson({ path: '/x' }), {});
    throwing.close();
    client.close();
  });
  it("reports each request's duration in seconds, from its sending to its response headers", async () => {
    const requests: RestRequestObservation[] = [];
    const client = unlimitedTransport(peer.kc, { observer: { observeRequest: (r) => requests.push(r) } });
    const started = performance.now();
    await client.request({ path: '/a' });
    const elapsedSeconds = (performance.now() - started) / 1000;
    assert.equal(requests.length, 1);
    const { durationSeconds } = requests[0] ?? assert.fail();
    assert.ok(
      durationSeconds > 0 && durationSeconds <= elapsedSeconds,
      `${durationSeconds} s of ${elapsedSeconds} s`,
    );
    client.close();
  });

  it('any 2xx is a success, 299 included; 300 is an error status', async () => {
    const client = unlimitedTransport(peer.kc);
    peer.route = (_req, res) => res.writeHead(299).end('{"kind":"Unusual"}');
    const response = await client.request({ path: '/a' });
    assert.deepEqual([response.status, response.body.toString()], [299, '{"kind":"Unusual"}']);
    peer.route = (_req, res) => res.writeHead(300).end('multiple choices');
    assert.equal((await rejection(client.request({ path: '/b' }))).status, 300);
    client.close();
  });

  it('leaves no timer and no listener on the caller signal behind once done: retried, failed or watched', async () => {
    const clock = new FakeClock();
    const client = unlimitedTransport(peer.kc, { clock });
    const signal = new AbortController().signal;
    const answers = [429];
    peer.route = (_req, res) => {
      const status = answers.shift();
      if (status === undefined) res.writeHead(200).end('{"type":"ADDED"}\n');
      else res.writeHead(status, { 'retry-after': '1' }).end('{}');
    };
    const retried = client.request({ path: '/a', timeoutMs: 5_000, signal });
    await peer.requestsArrived(1);
    await clock.advance(1_000);
    await retried;
    const watched = collect(client.watch({ path: '/w', timeoutMs: 5_000, idleTimeoutMs: 1_000, signal }));
    assert.deepEqual(await watched, [{ type: 'ADDED' }]);
    peer.route = (_req, res) => res.writeHead(404).end(statusBody(404, 'NotFound'));
    await rejection(client.request({ path: '/missing', timeoutMs: 5_000, signal }));
    assert.equal(clock.pendingTimers(), 0);
    assert.deepEqual(getEventListeners(signal, 'abort'), []);
    client.close();
  });

  it('refuses a path that does not start with "/" before sending anything', async () => {
    const client = unlimitedTransport(peer.kc);
    await assert.rejects(client.request({ path: 'api/v1/pods' }), {
      name: 'TypeError',
      message: 'KubeTransport: path must start with "/", got "api/v1/pods"',
    });
    assert.equal(peer.received.length, 0);
    client.close();
  });

  it('close() ends the kept-alive connections: the next request opens a new one', async () => {
    const client = unlimitedTransport(peer.kc);
    const opened = peer.connections;
    await client.request({ path: '/a' });
    client.close();
    await client.request({ path: '/b' });
    assert.equal(peer.connections - opened, 2);
    client.close();
  });
});

describe('KubeTransport rate limit', () => {
  it('every request waits for a token: burst at once, then one per 1/qps, waits reported', async () => {
    const clock = new FakeClock();
    const waits: RateLimiterWaitObservation[] = [];
    const client = unlimitedTransport(peer.kc, {
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
    await peer.requestsArrived(2);
    await clock.advance(0);
    assert.equal(peer.received.length, 2, 'only the burst reached the server');
    await clock.advance(100);
    await calls[2];
    assert.equal(peer.received.length, 3);
    await clock.advance(100);
    await Promise.all(calls);
    assert.deepEqual(
      peer.received.map((r) => r.url),
      ['/prefix/1', '/prefix/2', '/prefix/3', '/prefix/4'],
      'in call order',
    );
    assert.deepEqual(
      waits.map((w) => [w.method, w.host, w.durationSeconds]),
      [
        ['GET', peer.host, 0],
        ['GET', peer.host, 0],
        ['GET', peer.host, 0.1],
        ['GET', peer.host, 0.2],
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
    const client = new KubeTransport(peer.kc, {
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
    const client = unlimitedTransport(peer.kc, { rateLimit: { qps: 1, burst: 1 }, clock });
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
      peer.received.map((r) => r.url),
      ['/prefix/first', '/prefix/throttled'],
    );
    client.close();
  });

  it('a watch takes no token, as client-go does not rate-limit watches', async () => {
    const clock = new FakeClock();
    const client = unlimitedTransport(peer.kc, { rateLimit: { qps: 1, burst: 1 }, clock });
    await client.request({ path: '/first' });
    peer.route = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"BOOKMARK"}\n');
    };
    const watched = collect(client.watch({ path: '/w' }));
    // Real time for the round trip; the fake clock, which refills the bucket, stands still.
    const deadline = Date.now() + 2_000;
    while (peer.received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(
      peer.received.map((r) => r.url),
      ['/prefix/first', '/prefix/w'],
      'sent with no token left and no time passed',
    );
    assert.deepEqual(await watched, [{ type: 'BOOKMARK' }]);
    client.close();
  });

  it('a request aborted while waiting for its token is never sent and gives the token back', async () => {
    const clock = new FakeClock();
    const client = unlimitedTransport(peer.kc, { rateLimit: { qps: 1, burst: 1 }, clock });
    await client.request({ path: '/first' });
    const abort = new AbortController();
    const waiting = client.request({ path: '/cancelled', signal: abort.signal });
    abort.abort();
    assert.equal((await rejection(waiting)).failure, KubeApiFailure.Aborted);
    const next = client.request({ path: '/next' });
    await clock.advance(1000);
    await next;
    assert.deepEqual(
      peer.received.map((r) => r.url),
      ['/prefix/first', '/prefix/next'],
    );
    assert.equal(client.stats().requests, 2);
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
    peer.route = (_req, res) => {
      const [status, retryAfter] = answers.shift() ?? [200, undefined];
      if (retryAfter === undefined)
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}');
      else res.writeHead(Number(status), { 'retry-after': String(retryAfter) }).end('{}');
    };
    const client = unlimitedTransport(peer.kc, { clock });
    const call = client.requestJson<{ ok: number }>({ method: 'POST', path: '/pods', body: { a: 1 } });
    await peer.requestsArrived(1);
    await clock.advance(1999);
    assert.equal(peer.received.length, 1, 'waits the whole Retry-After');
    await clock.advance(1);
    await peer.requestsArrived(2);
    await clock.advance(1000);
    assert.deepEqual(await call, { ok: 1 });
    assert.deepEqual(
      peer.received.map((r) => [r.method, r.body]),
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
    peer.route = (_req, res) => res.writeHead(500).end(statusBody(500, 'InternalError'));
    const client = unlimitedTransport(peer.kc, { clock });
    assert.equal((await rejection(client.request({ path: '/a' }))).status, 500);
    assert.equal(peer.received.length, 1);
    peer.route = (_req, res) =>
      res.writeHead(429, { 'retry-after': '0' }).end(statusBody(429, 'TooManyRequests'));
    assert.equal((await rejection(client.request({ path: '/b' }))).status, 429);
    assert.equal(peer.received.length, 1 + 11);
    client.close();
  });

  it('a 500 with Retry-After is sent again too, after as many whole seconds as it says', async () => {
    const clock = new FakeClock();
    const answers = [500];
    peer.route = (_req, res) => {
      const status = answers.shift();
      if (status === undefined) res.writeHead(200).end('{}');
      else res.writeHead(status, { 'retry-after': '10' }).end(statusBody(status, 'InternalError'));
    };
    const client = unlimitedTransport(peer.kc, { clock });
    const call = client.request({ path: '/a' });
    await peer.requestsArrived(1);
    await clock.advance(9_999);
    assert.equal(peer.received.length, 1, 'waits the whole ten seconds');
    await clock.advance(1);
    assert.equal((await call).status, 200);
    assert.equal(peer.received.length, 2);
    client.close();
  });

  it('a Retry-After that is not whole seconds is no request to retry: the answer is returned as it is', async () => {
    // Time runs by itself: a retry would be quick to see, not a test that hangs.
    const clock = new FakeClock({ autoAdvance: true });
    const client = unlimitedTransport(peer.kc, { clock });
    for (const retryAfter of ['1.5', '-1', 'soon 1', 'Fri, 07 Nov 2025 10:00:00 GMT']) {
      peer.route = (_req, res) =>
        res.writeHead(503, { 'retry-after': retryAfter }).end(statusBody(503, 'ServiceUnavailable'));
      const error = await rejection(client.request({ path: `/${retryAfter}` }));
      assert.equal(error.status, 503, retryAfter);
    }
    assert.equal(peer.received.length, 4, 'each sent once');
    client.close();
  });

  it('aborting while waiting to retry fails the request as aborted, without sending it again', async () => {
    const clock = new FakeClock();
    peer.route = (_req, res) =>
      res.writeHead(429, { 'retry-after': '5' }).end(statusBody(429, 'TooManyRequests'));
    const client = unlimitedTransport(peer.kc, { clock });
    const abort = new AbortController();
    const call = client.request({ path: '/a', signal: abort.signal });
    await peer.requestsArrived(1);
    await clock.advance(1000);
    abort.abort();
    assert.equal((await rejection(call)).failure, KubeApiFailure.Aborted);
    await clock.advance(10_000);
    assert.equal(peer.received.length, 1);
    client.close();
  });
});

describe('KubeTransport targets', () => {
  it('needs a current cluster with a server', () => {
    const empty = new KubeConfig();
    assert.throws(() => new KubeTransport(empty), {
      message: 'KubeTransport: the KubeConfig has no current cluster with a server',
    });
    const serverless = new KubeConfig();
    serverless.loadFromOptions({
      clusters: [{ name: 'c', server: '' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    assert.throws(() => new KubeTransport(serverless), { message: /no current cluster with a server/ });
  });

  it('names the server without its trailing slashes, and reaches an IPv6 literal', async () => {
    const server = http.createServer((req, res) => res.writeHead(200).end(`ok ${req.url}`));
    await new Promise<void>((resolve) => server.listen(0, '::1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = unlimitedTransport(kubeConfig(`http://[::1]:${port}//`));
      assert.equal(client.server, `http://[::1]:${port}`);
      assert.equal(client.host, `[::1]:${port}`);
      const response = await client.request({ path: '/x' });
      assert.equal(response.body.toString(), 'ok /x', 'the trailing slashes are no path prefix');
      client.close();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("a proxied cluster's requests go through the KubeConfig's proxy, not the transport's agent", async () => {
    const tunnels: string[] = [];
    const proxy = http.createServer();
    proxy.on('connect', (request: http.IncomingMessage, socket: Duplex) => {
      tunnels.push(request.url ?? '');
      socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = proxy.address() as AddressInfo;
      const config = new KubeConfig();
      config.loadFromOptions({
        clusters: [{ name: 'far', server: 'http://kube.invalid:6443', proxyUrl: `http://127.0.0.1:${port}` }],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'x', cluster: 'far', user: 'u' }],
        currentContext: 'x',
      });
      const client = unlimitedTransport(config);
      const failure = await rejection(client.request({ path: '/version' }));
      assert.equal(failure.failure, 'network');
      assert.deepEqual(tunnels, ['kube.invalid:6443'], 'the proxy was asked for a tunnel to the server');
      client.close();
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });
});

describe('KubeTransport over HTTPS', () => {
  let dir = '';
  let key: Buffer;
  let cert: Buffer;

  before(async () => {
    // A self-signed certificate made for this run: the KubeConfig skips its verification.
    dir = await mkdtemp(join(tmpdir(), 'transport-test-'));
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-days',
      '1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]);
    [key, cert] = await Promise.all([readFile(join(dir, 'key.pem')), readFile(join(dir, 'cert.pem'))]);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('speaks TLS to an https server and keeps the connection alive between requests', async () => {
    let connections = 0;
    const server = https.createServer({ key, cert }, (req, res) => {
      res.writeHead(200).end(`${req.url} encrypted=${String((req.socket as TLSSocket).encrypted)}`);
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = unlimitedTransport(kubeConfig(`https://127.0.0.1:${port}/prefix`));
      const bodies = [];
      for (const path of ['/a', '/b']) bodies.push((await client.request({ path })).body.toString());
      assert.deepEqual(bodies, ['/prefix/a encrypted=true', '/prefix/b encrypted=true']);
      assert.equal(connections, 1);
      client.close();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
