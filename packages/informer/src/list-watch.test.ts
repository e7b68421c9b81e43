import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { FakeClock } from '@loopwright/core/testing';
import {
  KubeApiError,
  KubeApiFailure,
  KubeClient,
  type KubeObject,
  type ResourceType,
  type RestRequestObservation,
  type WatchEvent,
} from '@loopwright/client';
import { createResourceClient, type ResourceClient } from './list-watch.ts';

// A tiny peer that speaks the API server's list/watch wire format, to test request building and
// incremental decoding. Behaviour against the real API server is covered by the integration tests.
type Route = (url: URL, req: http.IncomingMessage, res: http.ServerResponse) => void;
let route: Route = (_url, _req, res) => res.writeHead(404).end();
const requests: URL[] = [];
const accepts: (string | undefined)[] = [];
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://peer');
  requests.push(url);
  accepts.push(req.headers.accept);
  route(url, req, res);
});
let kc: KubeConfig;
let kube: KubeClient;
const CONFIGMAPS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'peer', server: `http://127.0.0.1:${port}/prefix`, skipTLSVerify: true }],
    users: [{ name: 'user', token: 'secret-token' }],
    contexts: [{ name: 'ctx', cluster: 'peer', user: 'user' }],
    currentContext: 'ctx',
  });
  kube = new KubeClient(kc, { rateLimit: false });
});
after(async () => {
  await kube.close();
  server.closeAllConnections();
  server.close();
});

function client(
  options: { namespace?: string; labelSelector?: string; fieldSelector?: string; pageSize?: number } = {},
): ResourceClient<KubeObject> {
  return createResourceClient(kube.resource<KubeObject>(CONFIGMAPS), options);
}

const status = (code: number, reason: string) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: reason });

async function collect(events: AsyncIterable<WatchEvent<KubeObject>>): Promise<WatchEvent<KubeObject>[]> {
  const out: WatchEvent<KubeObject>[] = [];
  for await (const event of events) out.push(event);
  return out;
}

function watchRequest(overrides: { inactivityTimeoutMs?: number; signal?: AbortSignal } = {}) {
  return {
    resourceVersion: '100',
    timeoutSeconds: 321,
    inactivityTimeoutMs: overrides.inactivityTimeoutMs ?? 5_000,
    signal: overrides.signal ?? new AbortController().signal,
  };
}

describe('resource client on a resource handle', () => {
  it('pages through a list with limit/continue, forwards selectors and credentials, fills apiVersion/kind', async () => {
    const seenAuth: (string | undefined)[] = [];
    route = (url, req, res) => {
      seenAuth.push(req.headers.authorization);
      const page = url.searchParams.get('continue') === 'p2' ? 2 : 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          kind: 'ConfigMapList',
          apiVersion: 'v1',
          metadata: { resourceVersion: page === 1 ? '50' : '51', ...(page === 1 ? { continue: 'p2' } : {}) },
          items: [{ metadata: { name: `cm${page}`, namespace: 'ns', resourceVersion: String(page) } }],
        }),
      );
    };
    requests.length = 0;
    const result = await client({
      namespace: 'ns',
      labelSelector: 'app=web',
      fieldSelector: 'metadata.name!=x',
      pageSize: 1,
    }).list(new AbortController().signal);
    assert.deepEqual(
      result.items.map((i) => i.metadata?.name),
      ['cm1', 'cm2'],
    );
    assert.equal(result.resourceVersion, '51');
    assert.equal(result.items[0]?.kind, 'ConfigMap');
    assert.equal(result.items[0].apiVersion, 'v1');
    assert.equal(requests[0]?.pathname, '/prefix/api/v1/namespaces/ns/configmaps');
    assert.equal(requests[0].searchParams.get('limit'), '1');
    assert.equal(requests[0].searchParams.get('labelSelector'), 'app=web');
    assert.equal(requests[0].searchParams.get('fieldSelector'), 'metadata.name!=x');
    assert.equal(requests[0].searchParams.has('continue'), false);
    assert.equal(requests[1]?.searchParams.get('continue'), 'p2');
    assert.deepEqual(seenAuth, ['Bearer secret-token', 'Bearer secret-token']);
  });

  it("sends every list and watch request through the client, seen by the client's observer", async () => {
    route = (url, _req, res) => {
      if (url.searchParams.get('watch') === '1') {
        res.writeHead(403, { 'content-type': 'application/json' }).end(status(403, 'Forbidden'));
        return;
      }
      res
        .writeHead(200)
        .end(JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '7' }, items: [] }));
    };
    const seen: { method: string; path: string; statusCode: number | undefined }[] = [];
    const observed = new KubeClient(kc, {
      rateLimit: false,
      observer: {
        observeRequest: ({ method, path, statusCode }: RestRequestObservation) => {
          seen.push({ method, path, statusCode });
        },
      },
    });
    const resources = createResourceClient(observed.resource<KubeObject>(CONFIGMAPS));
    await resources.list(new AbortController().signal);
    await assert.rejects(collect(resources.watch(watchRequest())), { status: 403, reason: 'Forbidden' });
    assert.deepEqual(seen, [
      { method: 'GET', path: '/prefix/api/v1/configmaps', statusCode: 200 },
      { method: 'GET', path: '/prefix/api/v1/configmaps', statusCode: 403 },
    ]);
    await observed.close();
  });

  it("asks for protobuf lists and watches with `encoding: 'protobuf'`, JSON otherwise", async () => {
    // Only the request matters here: the decoding is the client's, tested against a real server.
    route = (_url, _req, res) =>
      res.writeHead(403, { 'content-type': 'application/json' }).end(status(403, 'Forbidden'));
    const decode = (): KubeObject => ({});
    const pods = kube.resource<KubeObject>(CONFIGMAPS, { protobuf: { decode } });
    for (const encoding of ['protobuf', 'json'] as const) {
      accepts.length = 0;
      const resources = createResourceClient(pods, { encoding });
      await assert.rejects(resources.list(new AbortController().signal), { status: 403 });
      await assert.rejects(collect(resources.watch(watchRequest())), { status: 403 });
      const protobuf = encoding === 'protobuf';
      assert.deepEqual(
        accepts.map((accept) => accept?.startsWith('application/vnd.kubernetes.protobuf') === true),
        [protobuf, protobuf],
        `${encoding}: ${accepts.join(' | ')}`,
      );
    }
  });

  it('falls back to one unpaginated list when a continue token expires', async () => {
    route = (url, _req, res) => {
      if (url.searchParams.get('continue') === 'old') {
        res.writeHead(410, { 'content-type': 'application/json' }).end(status(410, 'Expired'));
        return;
      }
      const paged = url.searchParams.has('limit');
      res.writeHead(200).end(
        JSON.stringify({
          kind: 'ConfigMapList',
          apiVersion: 'v1',
          metadata: { resourceVersion: '9', ...(paged ? { continue: 'old' } : {}) },
          items: paged
            ? [{ metadata: { name: 'partial' } }]
            : [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }],
        }),
      );
    };
    const result = await client().list(new AbortController().signal);
    assert.deepEqual(
      result.items.map((i) => i.metadata?.name),
      ['a', 'b'],
    );
  });

  it('classifies list errors by status and honours Retry-After', async () => {
    route = (_url, _req, res) =>
      res.writeHead(429, { 'retry-after': '3' }).end(status(429, 'TooManyRequests'));
    // The transport sends the list again after each Retry-After (10 times) before it returns the answer:
    // on a fake clock, moved past each wait once it is armed, rather than in 30 s of real time.
    const clock = new FakeClock();
    const waiting = new KubeClient(kc, { rateLimit: false, clock });
    const resources = createResourceClient(waiting.resource<KubeObject>(CONFIGMAPS));
    requests.length = 0;
    const listed = assert.rejects(resources.list(new AbortController().signal), (error: unknown) => {
      assert.ok(error instanceof KubeApiError);
      assert.equal(error.reason, 'TooManyRequests');
      assert.equal(error.retryAfterMs, 3000);
      return true;
    });
    for (let wait = 1; wait <= 10; wait++) {
      while (clock.armedDelays.filter((ms) => ms === 3000).length < wait)
        await new Promise((resolve) => setImmediate(resolve));
      await clock.advance(3000);
    }
    await listed;
    assert.equal(requests.length, 11, 'sent again after each of 10 Retry-After waits');
    await waiting.close();
    route = (_url, _req, res) => res.writeHead(502).end('<html>bad gateway</html>');
    await assert.rejects(client().list(new AbortController().signal), {
      failure: KubeApiFailure.Status,
      status: 502,
    });
  });

  it('watches with bookmarks and decodes events cut across chunks', async () => {
    route = (_url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const lines =
        [
          { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '101' } } },
          { type: 'BOOKMARK', object: { metadata: { resourceVersion: '150' } } },
          { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } },
        ]
          .map((e) => JSON.stringify(e))
          .join('\n') + '\n';
      // Dribble the bytes so that events arrive in pieces.
      let offset = 0;
      const step = (): void => {
        if (offset >= lines.length) {
          res.end();
          return;
        }
        res.write(lines.slice(offset, offset + 7));
        offset += 7;
        setImmediate(step);
      };
      step();
    };
    requests.length = 0;
    const events = await collect(client().watch(watchRequest()));
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'BOOKMARK', 'ERROR'],
    );
    const bookmark = events[1];
    assert.ok(bookmark?.type === 'BOOKMARK');
    assert.equal(bookmark.object.metadata?.resourceVersion, '150');
    const query = requests[0]?.searchParams;
    assert.ok(query !== undefined);
    assert.equal(query.get('watch'), '1');
    assert.equal(query.get('allowWatchBookmarks'), 'true');
    assert.equal(query.get('resourceVersion'), '100');
    assert.equal(query.get('timeoutSeconds'), '321');
    assert.equal(query.get('sendInitialEvents'), null, 'a plain watch unless asked');
    assert.equal(query.get('resourceVersionMatch'), null);
  });

  it('asks for a streaming list when the request says so', async () => {
    route = (_url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end();
    };
    requests.length = 0;
    await collect(client().watch({ ...watchRequest(), resourceVersion: '', sendInitialEvents: true }));
    const query = requests[0]?.searchParams;
    assert.equal(query?.get('sendInitialEvents'), 'true');
    assert.equal(query.get('resourceVersionMatch'), 'NotOlderThan');
    assert.equal(query.get('resourceVersion'), '');
    assert.equal(query.get('allowWatchBookmarks'), 'true', 'the end of the initial events is a bookmark');
  });

  it('fails a watch with the HTTP status and Status reason, e.g. 410 Gone and 403 Forbidden', async () => {
    route = (_url, _req, res) => res.writeHead(410).end(status(410, 'Gone'));
    await assert.rejects(collect(client().watch(watchRequest())), { status: 410, reason: 'Gone' });
    route = (_url, _req, res) => res.writeHead(403).end(status(403, 'Forbidden'));
    await assert.rejects(collect(client().watch(watchRequest())), { status: 403, reason: 'Forbidden' });
  });

  it('fails a watch whose connection is reset mid-stream as a network error', async () => {
    route = (_url, req, res) => {
      res.writeHead(200);
      res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } }) + '\n{"type":"ADD');
      setTimeout(() => req.socket.destroy(), 20);
    };
    await assert.rejects(collect(client().watch(watchRequest())), { failure: KubeApiFailure.Network });
  });

  it('aborts a watch that goes silent after the headers (inactivity timeout)', async () => {
    route = (_url, _req, res) => {
      res.writeHead(200);
      res.write(JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '1' } } }) + '\n');
      // ...then nothing, like a half-open connection.
    };
    const received: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of client().watch(watchRequest({ inactivityTimeoutMs: 150 })))
          received.push(event.type);
      })(),
      { failure: KubeApiFailure.Timeout },
    );
    assert.deepEqual(received, ['BOOKMARK']);
  });

  it('aborts a watch whose response headers never come (inactivity timeout)', async () => {
    route = () => undefined;
    await assert.rejects(collect(client().watch(watchRequest({ inactivityTimeoutMs: 150 }))), {
      failure: KubeApiFailure.Timeout,
    });
  });

  it('ends quietly when its signal aborts', async () => {
    route = (_url, _req, res) => {
      res.writeHead(200);
      res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } }) + '\n');
    };
    const abort = new AbortController();
    const received: string[] = [];
    for await (const event of client().watch(watchRequest({ signal: abort.signal }))) {
      received.push(event.type);
      abort.abort();
    }
    assert.deepEqual(received, ['ADDED']);
  });

  it('reports a connection refused as a network error', async () => {
    const refused = new KubeConfig();
    refused.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const refusedClient = new KubeClient(refused, { rateLimit: false });
    const deployments = refusedClient.resource<KubeObject>({
      group: 'apps',
      version: 'v1',
      plural: 'deployments',
      kind: 'Deployment',
      namespaced: true,
    });
    await assert.rejects(createResourceClient(deployments).list(new AbortController().signal), {
      failure: KubeApiFailure.Network,
    });
    await refusedClient.close();
  });
});
