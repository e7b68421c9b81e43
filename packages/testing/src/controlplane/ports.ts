import { createServer, type AddressInfo, type Server } from 'node:net';

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

/**
 * Starts `server` on a free port of `host` and returns its base URL (`http://host:port`, an IPv6
 * host bracketed). The fakes listen on the node bridge's address when pods must reach them.
 */
export async function listenOnFreePort(server: Server, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
