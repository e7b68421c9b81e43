import assert from 'node:assert/strict';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { Gauge, Registry } from 'prom-client';
import {
  HealthServerListenError,
  startHealthServer,
  type HealthServer,
  type HealthServerOptions,
} from './health-server.ts';

interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(
  port: number,
  path: string,
  options: { method?: string; agent?: Agent } = {},
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', agent: options.agent ?? false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
        });
      },
    );
    request.on('error', reject);
    request.end();
  });
}

const servers: HealthServer[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function start(options: Partial<HealthServerOptions> = {}): Promise<HealthServer> {
  const server = await startHealthServer({
    port: 0,
    host: '127.0.0.1',
    registry: new Registry(),
    isReady: () => true,
    ...options,
  });
  servers.push(server);
  return server;
}

describe('startHealthServer', () => {
  it('binds a free port when asked for port 0', async () => {
    const server = await start();
    assert.ok(server.port > 0);
    assert.equal((await send(server.port, '/healthz')).status, 200);
  });

  describe('/metrics', () => {
    it('serves the registry in the Prometheus text format with its content type', async () => {
      const registry = new Registry();
      new Gauge({ name: 'example_value', help: 'An example.', registers: [registry] }).set(42);
      const server = await start({ registry });
      const response = await send(server.port, '/metrics');
      assert.equal(response.status, 200);
      assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
      assert.equal(response.headers['content-type'], registry.contentType);
      assert.match(
        response.body,
        /^# HELP example_value An example\.\n# TYPE example_value gauge\nexample_value 42\n/,
      );
    });

    it('answers HEAD with the headers and no body', async () => {
      const registry = new Registry();
      new Gauge({ name: 'example_value', help: 'An example.', registers: [registry] }).set(1);
      const server = await start({ registry });
      const response = await send(server.port, '/metrics', { method: 'HEAD' });
      assert.equal(response.status, 200);
      assert.equal(response.headers['content-type'], registry.contentType);
      assert.equal(response.body, '');
    });

    it('answers 500 with the reason when collecting fails', async () => {
      const registry = new Registry();
      new Gauge({
        name: 'broken_value',
        help: 'Its collector throws.',
        registers: [registry],
        collect() {
          throw new Error('cannot read /proc/self/stat\nsecond line');
        },
      });
      const server = await start({ registry });
      const response = await send(server.port, '/metrics');
      assert.equal(response.status, 500);
      assert.equal(response.body, 'error collecting metrics: cannot read /proc/self/stat\n');
    });
  });

  describe('/healthz', () => {
    it('answers 200 "ok" while the process is alive', async () => {
      const server = await start({ isReady: () => false });
      const response = await send(server.port, '/healthz');
      assert.equal(response.status, 200, 'liveness does not depend on readiness');
      assert.equal(response.body, 'ok');
      assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
    });

    it('lists its checks with ?verbose', async () => {
      const server = await start({ checks: { healthz: { 'event-loop': () => true } } });
      const response = await send(server.port, '/healthz?verbose');
      assert.equal(response.status, 200);
      assert.equal(response.body, '[+]ping ok\n[+]event-loop ok\nhealthz check passed\n');
    });

    it('answers 500 naming the failing check', async () => {
      const server = await start({ checks: { healthz: { 'event-loop': () => false } } });
      const response = await send(server.port, '/healthz');
      assert.equal(response.status, 500);
      assert.equal(response.body, '[+]ping ok\n[-]event-loop failed: returned false\nhealthz check failed\n');
    });
  });

  describe('/readyz', () => {
    it('follows isReady, flipping both ways', async () => {
      let ready = false;
      const server = await start({ isReady: () => ready });
      let response = await send(server.port, '/readyz');
      assert.equal(response.status, 503);
      assert.equal(response.body, '[-]ready failed: returned false\nreadyz check failed\n');

      ready = true;
      response = await send(server.port, '/readyz');
      assert.equal(response.status, 200);
      assert.equal(response.body, 'ok');

      ready = false;
      assert.equal((await send(server.port, '/readyz')).status, 503);
    });

    it('awaits an asynchronous isReady', async () => {
      const server = await start({ isReady: () => Promise.resolve(true) });
      assert.equal((await send(server.port, '/readyz')).status, 200);
    });

    it('answers 503 with the error message when isReady throws or rejects', async () => {
      const throwing = await start({
        isReady: () => {
          throw new Error('informer pods not synced');
        },
      });
      let response = await send(throwing.port, '/readyz');
      assert.equal(response.status, 503);
      assert.equal(response.body, '[-]ready failed: informer pods not synced\nreadyz check failed\n');

      const rejecting = await start({ isReady: () => Promise.reject(new Error('lost the API server')) });
      response = await send(rejecting.port, '/readyz');
      assert.equal(response.status, 503);
      assert.match(response.body, /^\[-\]ready failed: lost the API server\n/);
    });

    it('answers 503 when a check never settles', async () => {
      const server = await start({
        isReady: () => new Promise<boolean>(() => undefined),
        checkTimeoutMs: 20,
      });
      const response = await send(server.port, '/readyz');
      assert.equal(response.status, 503);
      assert.equal(response.body, '[-]ready failed: timed out after 20 ms\nreadyz check failed\n');
    });

    it('combines isReady with extra checks, listing them with ?verbose', async () => {
      let webhookUp = true;
      const server = await start({ checks: { readyz: { webhook: () => webhookUp, cache: () => true } } });
      let response = await send(server.port, '/readyz?verbose=1');
      assert.equal(response.status, 200);
      assert.equal(response.body, '[+]ready ok\n[+]cache ok\n[+]webhook ok\nreadyz check passed\n');

      webhookUp = false;
      response = await send(server.port, '/readyz');
      assert.equal(response.status, 503);
      assert.equal(
        response.body,
        '[+]ready ok\n[+]cache ok\n[-]webhook failed: returned false\nreadyz check failed\n',
      );
    });

    it('refuses an extra check that would shadow a built-in one', async () => {
      await assert.rejects(start({ checks: { readyz: { ready: () => true } } }), TypeError);
      await assert.rejects(start({ checks: { healthz: { ping: () => true } } }), TypeError);
    });
  });

  describe('routing', () => {
    it('answers 404 for any other path', async () => {
      const server = await start();
      for (const path of ['/', '/metrics/', '/healthz/ping', '/livez', '//x/metrics']) {
        const response = await send(server.port, path);
        assert.equal(response.status, 404, path);
      }
    });

    it('serve: probes only, or /metrics only, the other endpoints 404', async () => {
      const probes = await start({ serve: 'probes' });
      const metrics = await start({ serve: 'metrics' });
      const statuses = async (server: HealthServer) =>
        Promise.all(
          ['/metrics', '/healthz', '/readyz'].map(async (path) => (await send(server.port, path)).status),
        );
      assert.deepEqual(await statuses(probes), [404, 200, 200]);
      assert.deepEqual(await statuses(metrics), [200, 404, 404]);
    });

    it('answers 405 with Allow for methods other than GET and HEAD', async () => {
      const server = await start();
      for (const method of ['POST', 'PUT', 'DELETE']) {
        for (const path of ['/metrics', '/healthz', '/readyz']) {
          const response = await send(server.port, path, { method });
          assert.equal(response.status, 405, `${method} ${path}`);
          assert.equal(response.headers.allow, 'GET, HEAD');
        }
      }
    });
  });

  describe('lifecycle', () => {
    it('rejects with HealthServerListenError when the port is taken', async () => {
      const first = await start();
      await assert.rejects(start({ port: first.port }), (error: unknown) => {
        assert.ok(error instanceof HealthServerListenError);
        assert.equal((error.cause as NodeJS.ErrnoException).code, 'EADDRINUSE');
        assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${first.port}`));
        return true;
      });
    });

    it('close() does not wait for a request that is still being answered', { timeout: 5000 }, async () => {
      let checkCalled: () => void = () => undefined;
      const called = new Promise<void>((resolve) => (checkCalled = resolve));
      const server = await startHealthServer({
        port: 0,
        host: '127.0.0.1',
        registry: new Registry(),
        isReady: () => {
          checkCalled();
          return new Promise<boolean>(() => undefined);
        },
        checkTimeoutMs: 60_000,
      });
      const pending = send(server.port, '/readyz');
      await called;
      await server.close();
      await assert.rejects(pending, { code: 'ECONNRESET' });
    });

    it('close() drops keep-alive connections, stops listening and can be called twice', async () => {
      const server = await startHealthServer({
        port: 0,
        host: '127.0.0.1',
        registry: new Registry(),
        isReady: () => true,
      });
      const agent = new Agent({ keepAlive: true });
      let socket: Socket | undefined;
      const response = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          { host: '127.0.0.1', port: server.port, path: '/healthz', agent },
          (res) => {
            res.resume();
            res.on('end', () => {
              resolve(res.statusCode ?? 0);
            });
          },
        );
        request.on('socket', (s) => (socket = s));
        request.on('error', reject);
        request.end();
      });
      assert.equal(response, 200);
      assert.ok(socket && !socket.destroyed, 'the client keeps the connection open');
      const socketClosed = new Promise((resolve) => socket?.once('close', resolve));

      await server.close();
      await socketClosed;
      await server.close();
      await assert.rejects(send(server.port, '/healthz'), { code: 'ECONNREFUSED' });
      agent.destroy();
    });
  });
});
