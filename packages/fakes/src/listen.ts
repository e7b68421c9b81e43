import type { AddressInfo, Server } from 'node:net';

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
