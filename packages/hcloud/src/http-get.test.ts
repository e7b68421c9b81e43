/**
 * Tests of the node:http(s) GET against real servers on the loopback. The TLS tests use a self-signed
 * certificate made with the openssl command; the trusting one hands it to node:https's global agent (the
 * agent `httpGet` uses) for that test only.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { httpGet } from './http-get.ts';

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

/** Starts `server` on 127.0.0.1, closed (open connections included) after the test; returns its port. */
async function listen(t: TestContext, server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
  });
  return (server.address() as AddressInfo).port;
}

/** An HTTP server answering with `handler`; returns its base URL. */
async function serve(t: TestContext, handler: Handler): Promise<string> {
  return `http://127.0.0.1:${await listen(t, http.createServer(handler))}`;
}

/** A server that echoes the request headers it received as the JSON body. */
async function echoHeaders(t: TestContext): Promise<string> {
  return serve(t, (request, response) => {
    response.setHeader('Content-Type', 'application/json');
    response.end(JSON.stringify(request.headers));
  });
}

/** Text that compresses well and is long enough to reach the client in several chunks. */
const LONG_TEXT = Array.from({ length: 20_000 }, (_, i) => `{"id":${i},"name":"server-${i}"}`).join(',');

/** Resolves on the next turn of the event loop, after pending I/O callbacks. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Calls `onResponse` with the response of each client request made to `port` as it arrives, after
 * `httpGet`'s own handler has seen it: a look at the client side without guessing at timing.
 */
function onClientResponse(
  t: TestContext,
  port: number,
  onResponse: (response: http.IncomingMessage) => void,
): void {
  const onStart = (message: unknown): void => {
    const { request } = message as { request: http.ClientRequest };
    if (request.getHeader('host') === `127.0.0.1:${port}`) request.once('response', onResponse);
  };
  subscribe('http.client.request.start', onStart);
  t.after(() => unsubscribe('http.client.request.start', onStart));
}

/** Asserts that `promise` rejects with node's AbortError carrying `reason` as its cause. */
async function assertAborted(promise: Promise<unknown>, reason: unknown): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof Error, `expected an Error, got ${String(error)}`);
    assert.equal(error.name, 'AbortError');
    assert.equal((error as NodeJS.ErrnoException).code, 'ABORT_ERR');
    assert.equal(error.cause, reason);
    return true;
  });
}

describe('httpGet: the request', () => {
  it('sends the given headers and asks for gzip', async (t) => {
    const url = await echoHeaders(t);
    const response = await httpGet(`${url}/v1/servers?page=2`, {
      headers: { Authorization: 'Bearer secret-token', 'User-Agent': 'loopwright-test/1' },
    });
    assert.equal(response.status, 200);
    const received = JSON.parse(response.text) as Record<string, string>;
    assert.equal(received.authorization, 'Bearer secret-token');
    assert.equal(received['user-agent'], 'loopwright-test/1');
    assert.equal(received['accept-encoding'], 'gzip');
  });

  it('requests the path and query of the URL', async (t) => {
    const url = await serve(t, (request, response) => {
      response.end(`${request.method ?? ''} ${request.url ?? ''}`);
    });
    const response = await httpGet(`${url}/v1/servers?page=2&per_page=50`, { headers: {} });
    assert.equal(response.text, 'GET /v1/servers?page=2&per_page=50');
  });

  it("lets the caller's own Accept-Encoding win over the default, whatever its case", async (t) => {
    const url = await echoHeaders(t);
    for (const name of ['Accept-Encoding', 'accept-encoding', 'ACCEPT-ENCODING']) {
      const response = await httpGet(url, { headers: { [name]: 'identity' } });
      const received = JSON.parse(response.text) as Record<string, string>;
      assert.equal(received['accept-encoding'], 'identity', name);
    }
  });
});

describe('httpGet: the answer', () => {
  it('resolves with the status and the whole body as text', async (t) => {
    const url = await serve(t, (_request, response) => {
      response.writeHead(201, { 'Content-Type': 'text/plain' });
      response.end('created');
    });
    const response = await httpGet(url, { headers: {} });
    assert.equal(response.status, 201);
    assert.equal(response.text, 'created');
  });

  it('reads a body written in many chunks to its end', async (t) => {
    const url = await serve(t, (_request, response) => {
      // Chunked transfer encoding, no Content-Length: the end is the terminating chunk.
      const write = (i: number): void => {
        if (i === LONG_TEXT.length) {
          response.end();
          return;
        }
        response.write(LONG_TEXT.slice(i, i + 50_000), () => {
          write(Math.min(i + 50_000, LONG_TEXT.length));
        });
      };
      write(0);
    });
    const response = await httpGet(url, { headers: {} });
    assert.equal(response.text, LONG_TEXT);
  });

  it('decodes multi-byte UTF-8 characters split across chunks', async (t) => {
    const text = 'Grüße, 10 € 🚀 ✓ Ω';
    const bytes = Buffer.from(text, 'utf8');
    // Cut inside ü (2 bytes), € (3 bytes) and 🚀 (4 bytes).
    const cuts = [
      bytes.indexOf('ü') + 1,
      bytes.indexOf('€') + 1,
      bytes.indexOf('€') + 2,
      bytes.indexOf('🚀') + 3,
    ];
    const pieces = [0, ...cuts].map((start, i) => bytes.subarray(start, cuts[i] ?? bytes.length));
    // And a long body of 3- and 4-byte characters, which no chunk boundary of the stream lines up with.
    const long = '€🚀'.repeat(50_000);
    const url = await serve(t, (request, response) => {
      if (request.url === '/long') {
        response.end(long);
        return;
      }
      response.writeHead(200, { 'Content-Length': String(bytes.length) });
      const write = async (): Promise<void> => {
        for (const piece of pieces) {
          await new Promise<void>((resolve) =>
            response.write(piece, () => {
              resolve();
            }),
          );
          await nextTurn();
        }
        response.end();
      };
      void write();
    });
    assert.equal((await httpGet(url, { headers: {} })).text, text);
    assert.equal((await httpGet(`${url}/long`, { headers: {} })).text, long);
  });

  it('resolves an empty body as an empty string', async (t) => {
    const url = await serve(t, (_request, response) => {
      response.writeHead(204);
      response.end();
    });
    const response = await httpGet(url, { headers: {} });
    assert.equal(response.status, 204);
    assert.equal(response.text, '');
  });

  it('resolves non-2xx statuses with their body', async (t) => {
    const error = JSON.stringify({ error: { code: 'unavailable', message: 'try again later' } });
    const url = await serve(t, (request, response) => {
      if (request.url === '/gone') {
        response.writeHead(404, { 'Content-Type': 'application/json' });
        response.end('{"error":{"code":"not_found"}}');
        return;
      }
      response.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '7' });
      response.end(error);
    });
    const unavailable = await httpGet(url, { headers: {} });
    assert.equal(unavailable.status, 503);
    assert.equal(unavailable.text, error);
    assert.equal(unavailable.headers.get('retry-after'), '7');
    const gone = await httpGet(`${url}/gone`, { headers: {} });
    assert.equal(gone.status, 404);
    assert.deepEqual(JSON.parse(gone.text), { error: { code: 'not_found' } });
  });

  it('does not follow a redirect: it resolves with the 3xx answer', async (t) => {
    let requests = 0;
    const url = await serve(t, (_request, response) => {
      requests++;
      response.writeHead(301, { Location: '/elsewhere' });
      response.end('moved');
    });
    const response = await httpGet(url, { headers: {} });
    assert.equal(response.status, 301);
    assert.equal(response.headers.get('Location'), '/elsewhere');
    assert.equal(response.text, 'moved');
    assert.equal(requests, 1);
  });
});

describe('httpGet: headers.get', () => {
  const setup = async (t: TestContext): Promise<Awaited<ReturnType<typeof httpGet>>> => {
    const url = await serve(t, (_request, response) => {
      response.setHeader('X-Request-Id', 'req-42');
      response.setHeader('RateLimit-Remaining', '3599');
      response.setHeader('Set-Cookie', ['a=1', 'b=2; Path=/']);
      response.setHeader('X-Repeated', ['one', 'two']);
      response.end('ok');
    });
    return httpGet(url, { headers: {} });
  };

  it('looks names up case-insensitively', async (t) => {
    const { headers } = await setup(t);
    for (const name of ['x-request-id', 'X-Request-Id', 'X-REQUEST-ID', 'x-ReQuEsT-iD']) {
      assert.equal(headers.get(name), 'req-42', name);
    }
    assert.equal(headers.get('RateLimit-Remaining'), '3599');
    assert.equal(headers.get('ratelimit-remaining'), '3599');
  });

  it('is null for an absent header', async (t) => {
    const { headers } = await setup(t);
    assert.equal(headers.get('X-Absent'), null);
    assert.equal(headers.get('ratelimit-reset'), null);
  });

  it("joins a repeated header with ', ', also set-cookie, which node keeps as an array", async (t) => {
    // What the getter is given: node joins most repeated headers itself but keeps set-cookie a list.
    const url = await serve(t, (_request, response) => {
      response.setHeader('Set-Cookie', ['a=1', 'b=2']);
      response.setHeader('X-Repeated', ['one', 'two']);
      response.end();
    });
    const raw = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
      http
        .get(url, { agent: false }, (response) => {
          response.resume();
          response.on('end', () => {
            resolve(response.headers);
          });
        })
        .on('error', reject);
    });
    assert.deepEqual(raw['set-cookie'], ['a=1', 'b=2']);
    assert.equal(raw['x-repeated'], 'one, two');

    const { headers } = await setup(t);
    assert.equal(headers.get('Set-Cookie'), 'a=1, b=2; Path=/');
    assert.equal(headers.get('set-cookie'), 'a=1, b=2; Path=/');
    assert.equal(headers.get('X-Repeated'), 'one, two');
  });
});

describe('httpGet: gzip', () => {
  /** A server that sends LONG_TEXT gzip'ed with `Content-Encoding: <encoding>`. */
  const gzipServer = (t: TestContext, encoding: string): Promise<string> =>
    serve(t, (_request, response) => {
      const body = gzipSync(LONG_TEXT);
      response.writeHead(200, { 'Content-Encoding': encoding, 'Content-Length': String(body.length) });
      response.end(body);
    });

  it('inflates a gzip’ed body', async (t) => {
    const url = await gzipServer(t, 'gzip');
    const response = await httpGet(url, { headers: {} });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-encoding'), 'gzip');
    assert.equal(response.text, LONG_TEXT);
  });

  it('recognises the encoding whatever its case and surrounding whitespace', async (t) => {
    for (const encoding of ['GZIP', ' GZIP ', 'Gzip', '\tgzip ']) {
      const url = await gzipServer(t, encoding);
      const response = await httpGet(url, { headers: {} });
      assert.equal(response.text, LONG_TEXT, JSON.stringify(encoding));
      // Node's parser already strips the whitespace around a field value (RFC 9110's OWS).
      assert.equal(response.headers.get('Content-Encoding'), encoding.trim());
    }
  });

  it('inflates a gzip’ed body written in pieces, with multi-byte characters', async (t) => {
    const text = `${LONG_TEXT} Grüße 🚀`;
    const body = gzipSync(text);
    const url = await serve(t, (_request, response) => {
      response.writeHead(200, { 'Content-Encoding': 'gzip' });
      const write = async (): Promise<void> => {
        for (let i = 0; i < body.length; i += 1000) {
          await new Promise<void>((resolve) =>
            response.write(body.subarray(i, i + 1000), () => {
              resolve();
            }),
          );
        }
        response.end();
      };
      void write();
    });
    assert.equal((await httpGet(url, { headers: {} })).text, text);
  });

  it('inflates by what the answer says, even when the caller asked for no encoding', async (t) => {
    const url = await gzipServer(t, 'gzip');
    assert.equal((await httpGet(url, { headers: { 'Accept-Encoding': 'identity' } })).text, LONG_TEXT);
  });

  it('returns a body with another or no content-encoding as it is', async (t) => {
    const url = await serve(t, (request, response) => {
      const encoding = new URL(request.url ?? '/', 'http://x').searchParams.get('encoding');
      if (encoding !== null) response.setHeader('Content-Encoding', encoding);
      response.end('not compressed at all');
    });
    for (const encoding of ['identity', 'deflate', 'br', 'x-gzip', 'gzip2']) {
      const response = await httpGet(`${url}/?encoding=${encoding}`, { headers: {} });
      assert.equal(response.text, 'not compressed at all', encoding);
      assert.equal(response.headers.get('Content-Encoding'), encoding);
    }
    const plain = await httpGet(url, { headers: {} });
    assert.equal(plain.text, 'not compressed at all');
    assert.equal(plain.headers.get('Content-Encoding'), null);
  });

  it('rejects a body that says gzip but is not', async (t) => {
    const url = await serve(t, (_request, response) => {
      response.writeHead(200, { 'Content-Encoding': 'gzip' });
      response.end('{"servers":[]}');
    });
    await assert.rejects(httpGet(url, { headers: {} }), { code: 'Z_DATA_ERROR' });
  });

  it('rejects a complete answer whose gzip stream is truncated', async (t) => {
    const body = gzipSync(LONG_TEXT);
    const truncated = body.subarray(0, body.length - 100);
    const url = await serve(t, (_request, response) => {
      response.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Length': String(truncated.length) });
      response.end(truncated);
    });
    await assert.rejects(httpGet(url, { headers: {} }), { code: 'Z_BUF_ERROR' });
  });
});

// A failure or abort that never settles the promise would hang the run: the timeouts turn that into a failure.
describe('httpGet: network failures', { timeout: 10_000 }, () => {
  it('rejects when the connection is refused', async (t) => {
    const closed = http.createServer();
    const port = await listen(t, closed);
    closed.closeAllConnections();
    await new Promise<void>((resolve) =>
      closed.close(() => {
        resolve();
      }),
    );
    await assert.rejects(httpGet(`http://127.0.0.1:${port}/`, { headers: {} }), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.equal((error as NodeJS.ErrnoException).code, 'ECONNREFUSED');
      assert.match(error.message, /ECONNREFUSED/);
      return true;
    });
  });

  it('rejects when the server closes the connection without answering', async (t) => {
    const url = await serve(t, (request) => {
      request.socket.destroy();
    });
    await assert.rejects(httpGet(url, { headers: {} }), { code: 'ECONNRESET', message: 'socket hang up' });
  });

  it('rejects when the server cuts the connection in the middle of the body', async (t) => {
    const url = await serve(t, (request, response) => {
      response.writeHead(200, { 'Content-Length': '1000' });
      response.write('{"servers":[', () => request.socket.destroy());
    });
    await assert.rejects(httpGet(url, { headers: {} }), { code: 'ECONNRESET', message: 'aborted' });
  });

  it('rejects when the server cuts a chunked body before its last chunk', async (t) => {
    const url = await serve(t, (request, response) => {
      response.write('{"servers":[', () => request.socket.destroy());
    });
    await assert.rejects(httpGet(url, { headers: {} }), { code: 'ECONNRESET', message: 'aborted' });
  });

  it('rejects when the server cuts the connection in the middle of a gzip’ed body', async (t) => {
    const body = gzipSync(LONG_TEXT);
    const url = await serve(t, (request, response) => {
      response.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Length': String(body.length) });
      response.write(body.subarray(0, body.length >> 1), () => request.socket.destroy());
    });
    await assert.rejects(httpGet(url, { headers: {} }), { code: 'ECONNRESET', message: 'aborted' });
  });
});

describe('httpGet: abort', { timeout: 10_000 }, () => {
  /** A server that answers `/partial` with a first piece of a body and `/gzip` likewise, then stalls. */
  const stallingServer = async (
    t: TestContext,
  ): Promise<{ url: string; port: number; arrived: Promise<void> }> => {
    let onArrival = (): void => undefined;
    const arrived = new Promise<void>((resolve) => (onArrival = resolve));
    const server = http.createServer((request, response) => {
      onArrival();
      if (request.url === '/partial') {
        response.writeHead(200, { 'Content-Length': '1000' });
        response.write('{"servers":[');
      } else if (request.url === '/gzip') {
        const body = gzipSync(LONG_TEXT);
        response.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Length': String(body.length) });
        response.write(body.subarray(0, 1000));
      }
      // Anything else: no answer at all.
    });
    const port = await listen(t, server);
    return { url: `http://127.0.0.1:${port}`, port, arrived };
  };

  it('rejects when aborted before the answer comes', async (t) => {
    const { url, arrived } = await stallingServer(t);
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const pending = httpGet(`${url}/silent`, { headers: {}, signal: controller.signal });
    // Abort once the server has the request (or at once if it failed some other way, to report that).
    await Promise.race([arrived, pending.catch(() => undefined)]);
    controller.abort(reason);
    await assertAborted(pending, reason);
  });

  for (const [body, path] of [
    ['a body', '/partial'],
    ['a gzip’ed body', '/gzip'],
  ] as const)
    it(`rejects when aborted while ${body} is being read`, async (t) => {
      const { url, port } = await stallingServer(t);
      const controller = new AbortController();
      const reason = new Error('timeout');
      // Once the first piece of the body is in, and the rest is not coming.
      onClientResponse(t, port, (response) => {
        response.once('data', () => {
          controller.abort(reason);
        });
      });
      await assertAborted(httpGet(`${url}${path}`, { headers: {}, signal: controller.signal }), reason);
    });

  it('rejects at once with a signal that is already aborted', async (t) => {
    const { url } = await stallingServer(t);
    const reason = new Error('already gone');
    await assertAborted(
      httpGet(`${url}/partial`, { headers: {}, signal: AbortSignal.abort(reason) }),
      reason,
    );
  });

  it('is unaffected by a signal that is never aborted', async (t) => {
    const url = await serve(t, (_request, response) => response.end('fine'));
    const controller = new AbortController();
    const response = await httpGet(url, { headers: {}, signal: controller.signal });
    assert.equal(response.text, 'fine');
  });
});

describe('httpGet: https', () => {
  let dir = '';
  let key: Buffer;
  let cert: Buffer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'http-get-test-'));
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
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-days',
      '1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]);
    key = await readFile(join(dir, 'key.pem'));
    cert = await readFile(join(dir, 'cert.pem'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** An HTTPS server with the self-signed certificate that answers whether the request came over TLS. */
  const tlsServer = async (t: TestContext): Promise<string> => {
    const server = https.createServer({ key, cert }, (request, response) => {
      const encrypted = 'encrypted' in request.socket && request.socket.encrypted === true;
      const body = gzipSync(
        JSON.stringify({ encrypted, acceptEncoding: request.headers['accept-encoding'] }),
      );
      response.writeHead(200, { 'Content-Encoding': 'gzip' });
      response.end(body);
    });
    return `https://127.0.0.1:${await listen(t, server)}`;
  };

  it('speaks TLS to an https URL and checks the certificate: an untrusted one rejects', async (t) => {
    const url = await tlsServer(t);
    await assert.rejects(httpGet(`${url}/v1/servers`, { headers: {} }), {
      code: 'DEPTH_ZERO_SELF_SIGNED_CERT',
    });
  });

  it('resolves over TLS with a certificate the global agent trusts', async (t) => {
    const url = await tlsServer(t);
    const options = https.globalAgent.options;
    const had = Object.hasOwn(options, 'ca');
    const previous = options.ca;
    options.ca = cert;
    t.after(() => {
      if (had) options.ca = previous;
      else delete options.ca;
    });
    const response = await httpGet(`${url}/v1/servers`, { headers: {} });
    assert.equal(response.status, 200);
    assert.deepEqual(JSON.parse(response.text), { encrypted: true, acceptEncoding: 'gzip' });
  });
});

describe('httpGet: empty and undecodable gzip bodies', () => {
  it('resolves a 204 or 304 that names gzip as its encoding but has no body as empty text', async (t) => {
    const url = await serve(t, (request, response) => {
      response.writeHead(request.url === '/not-modified' ? 304 : 204, { 'Content-Encoding': 'gzip' });
      response.end();
    });
    const noContent = await httpGet(url, { headers: {} });
    assert.equal(noContent.status, 204);
    assert.equal(noContent.text, '');
    const notModified = await httpGet(`${url}/not-modified`, { headers: {} });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.text, '');
  });

  it('reads the response to its end before inflating: a body that fails to inflate leaves no response open', async (t) => {
    // Not gzip, and long: a streaming inflater would fail on its first bytes with the rest still arriving.
    const body = Buffer.alloc(4 * 1024 * 1024, 'x');
    const server = http.createServer((_request, response) => {
      response.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Length': String(body.length) });
      response.end(body);
    });
    const port = await listen(t, server);
    const responses: http.IncomingMessage[] = [];
    onClientResponse(t, port, (response) => responses.push(response));
    await assert.rejects(httpGet(`http://127.0.0.1:${port}/`, { headers: {} }), { code: 'Z_DATA_ERROR' });
    const [response] = responses;
    assert.equal(responses.length, 1);
    assert.equal(response?.complete, true);
    assert.equal(response.destroyed, true);
  });
});
