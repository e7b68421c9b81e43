import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { freeLoopbackPort } from './ports.ts';

describe('freeLoopbackPort', () => {
  it("gives a free port below the kernel's ephemeral range, which outgoing connections never take", async () => {
    const ephemeralLow = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    const ports = await Promise.all(Array.from({ length: 20 }, () => freeLoopbackPort()));
    for (const port of ports) {
      assert.ok(port >= 10_000 && port < ephemeralLow, `${port} is in [10000, ${ephemeralLow})`);
    }
    assert.ok(new Set(ports).size > 1, 'picked at random');
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '127.0.0.1', resolve);
    });
    server.close();
  });

  it('passes over a port something listens on', async (t) => {
    const ephemeralLow = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    const takenPort = await freeLoopbackPort();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(takenPort, '127.0.0.1', resolve));
    t.after(() => taken.close());
    // The first pick lands on the taken port, the next ones anywhere.
    const picks = [(takenPort - 10_000 + 0.5) / (ephemeralLow - 10_000)];
    t.mock.method(Math, 'random', () => picks.shift() ?? 0.5);
    const port = await freeLoopbackPort();
    assert.notEqual(port, takenPort);
    assert.equal(picks.length, 0, 'the taken port was tried first');
  });
});
