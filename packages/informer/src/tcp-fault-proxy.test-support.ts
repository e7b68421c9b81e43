import net from 'node:net';

/**
 * A TCP proxy between a client and the API server (TLS passes through untouched), able to inject
 * the network faults an informer must survive:
 * - `cutAll()`: reset every open connection (ECONNRESET mid-stream);
 * - `refuse()`: additionally reset new connections at once until `restore()`;
 * - `goSilent()`: keep every connection (old and new) open but drop all bytes in both directions,
 *   like a half-open connection behind a dead NAT/load balancer, until `restore()`.
 */
export class TcpFaultProxy {
  readonly #target: { host: string; port: number };
  readonly #server: net.Server;
  readonly #pairs = new Set<{ client: net.Socket; upstream: net.Socket; silent: boolean }>();
  #mode: 'forward' | 'refuse' | 'silent' = 'forward';

  private constructor(target: { host: string; port: number }) {
    this.#target = target;
    this.#server = net.createServer((client) => {
      this.#accept(client);
    });
  }

  static async start(target: { host: string; port: number }): Promise<TcpFaultProxy> {
    const proxy = new TcpFaultProxy(target);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.#server.address() as net.AddressInfo).port;
  }

  cutAll(): void {
    for (const pair of this.#pairs) {
      pair.client.resetAndDestroy();
      pair.upstream.destroy();
    }
    this.#pairs.clear();
  }

  refuse(): void {
    this.#mode = 'refuse';
    this.cutAll();
  }

  goSilent(): void {
    this.#mode = 'silent';
    for (const pair of this.#pairs) pair.silent = true;
  }

  /** Back to forwarding for new connections; connections silenced before stay silent (they are dead). */
  restore(): void {
    this.#mode = 'forward';
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => {
      this.#server.close(() => {
        resolve();
      });
    });
  }

  #accept(client: net.Socket): void {
    if (this.#mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(this.#target.port, this.#target.host);
    const pair = { client, upstream, silent: this.#mode === 'silent' };
    this.#pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (!pair.silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!pair.silent) client.write(chunk);
    });
    const teardown = (): void => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', teardown);
    upstream.on('error', teardown);
    client.on('close', teardown);
    upstream.on('close', teardown);
  }
}
