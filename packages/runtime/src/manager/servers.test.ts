import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { createMetrics } from '@loopwright/metrics';
import { startServers, type ServedContent } from './servers.ts';

const content: ServedContent = {
  registry: createMetrics({ defaultMetrics: false }).registry,
  isReady: () => true,
};
const local = { port: 0, host: '127.0.0.1' };

async function status(port: number, path: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  await response.arrayBuffer();
  return response.status;
}

async function refused(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => false,
    () => true,
  );
}

describe('startServers', () => {
  it('serves probes and /metrics on one server when metrics has no address of its own', async () => {
    const servers = await startServers({ health: local }, content);
    try {
      assert.equal(servers.metrics, undefined);
      const port = servers.probes?.port ?? 0;
      assert.equal(await status(port, '/healthz'), 200);
      assert.equal(await status(port, '/readyz'), 200);
      assert.equal(await status(port, '/metrics'), 200);
    } finally {
      await servers.close();
    }
  });

  it('serves each on its own address, and nothing of the other there', async () => {
    const servers = await startServers({ health: local, metricsServer: local }, content);
    try {
      const probes = servers.probes?.port ?? 0;
      const metrics = servers.metrics?.port ?? 0;
      assert.notEqual(probes, metrics);
      assert.equal(await status(probes, '/healthz'), 200);
      assert.equal(await status(probes, '/metrics'), 404);
      assert.equal(await status(metrics, '/metrics'), 200);
      assert.equal(await status(metrics, '/healthz'), 404);
    } finally {
      await servers.close();
    }
    assert.equal(await refused(servers.probes?.port ?? 0), true, 'close() stops the probes');
    assert.equal(await refused(servers.metrics?.port ?? 0), true, 'close() stops the metrics');
  });

  it('serves only what has an address', async () => {
    const metricsOnly = await startServers({ health: false, metricsServer: local }, content);
    try {
      assert.equal(metricsOnly.probes, undefined);
      assert.equal(await status(metricsOnly.metrics?.port ?? 0, '/metrics'), 200);
    } finally {
      await metricsOnly.close();
    }
    const none = await startServers({ health: false }, content);
    assert.equal(none.probes, undefined);
    assert.equal(none.metrics, undefined);
    await none.close();
    const probesOnly = await startServers({ health: local, metricsServer: false }, content);
    try {
      assert.equal(probesOnly.metrics, undefined);
      assert.equal(await status(probesOnly.probes?.port ?? 0, '/metrics'), 404);
    } finally {
      await probesOnly.close();
    }
  });

  it('closes the probes when the metrics address cannot be bound, and rejects', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const takenPort = (taken.address() as { port: number }).port;
    const probesPort = await freePort();
    try {
      await assert.rejects(
        startServers(
          {
            health: { port: probesPort, host: '127.0.0.1' },
            metricsServer: { port: takenPort, host: '127.0.0.1' },
          },
          content,
        ),
        (error: Error) => error.message.includes(String(takenPort)),
      );
      assert.equal(await refused(probesPort), true, 'the probes server was closed');
    } finally {
      taken.close();
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
