import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Lowest port handed out: below it sit the well-known and registered ports of common services. */
const LOWEST_PORT = 10_000;
/** Tries of a random port below the ephemeral range before asking the kernel for one. */
const TRIES = 20;

/**
 * A free loopback port, for a process started next to listen on. The port is released before the
 * caller binds it, so a caller must still treat "address in use" at start-up as retryable
 * (startControlPlane does).
 *
 * It is picked below the kernel's ephemeral range (`ip_local_port_range`, 32768-60999 by default):
 * the kernel gives ports of that range to every outgoing connection, and a test run opens thousands,
 * so a port released by `listen(0)` was at times taken by one before the caller bound it (a demo
 * controller failed to start in CI with EADDRINUSE). Below the range only another caller of this
 * function can take it, and each checks the port is free first. Where the range starts too low to
 * leave room, the kernel picks.
 */
export async function freeLoopbackPort(): Promise<number> {
  const ephemeralLow = ephemeralRangeStart();
  if (ephemeralLow - LOWEST_PORT >= 1000) {
    for (let i = 0; i < TRIES; i++) {
      const port = LOWEST_PORT + Math.floor(Math.random() * (ephemeralLow - LOWEST_PORT));
      if ((await listenAndRelease(port).catch(() => undefined)) !== undefined) return port;
    }
  }
  return listenAndRelease(0);
}

/** The first port of the kernel's ephemeral range; Linux's default where it cannot be read. */
function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Listens on `port` of 127.0.0.1 (0: any), closes, and resolves with the port it had. */
function listenAndRelease(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}
