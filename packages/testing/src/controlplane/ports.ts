import { createServer } from 'node:net';

/**
 * Asks the kernel for a free loopback port. The port is released before the caller binds it, so a
 * caller must treat "address in use" at start-up as retryable (startControlPlane does).
 */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}
