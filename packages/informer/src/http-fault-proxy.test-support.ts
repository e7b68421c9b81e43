import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * An HTTP-level proxy in front of the API server: the informer talks plain HTTP to it, it forwards
 * to the real API server with the real kubeconfig's TLS and credentials. It records every request
 * and can answer watch requests with a 410 (as an HTTP status or as an ERROR event, the two ways the
 * API server reports an expired resourceVersion), end open watches, and hold requests.
 */
export class HttpFaultProxy {
  readonly #upstream: KubeConfig;
  readonly #server: http.Server;
  readonly #openWatches = new Set<http.ServerResponse>();
  #held: (() => void)[] = [];
  #holding = false;
  #goneMode: 'status' | 'event' | undefined;
  /** Path and query of every request received, in order. */
  readonly requests: URL[] = [];

  private constructor(upstream: KubeConfig) {
    this.#upstream = upstream;
    this.#server = http.createServer((req, res) => {
      this.#handle(req, res);
    });
  }

  static async start(upstream: KubeConfig): Promise<HttpFaultProxy> {
    const proxy = new HttpFaultProxy(upstream);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** A kubeconfig for the client side: plain HTTP to this proxy, no credentials (the proxy adds them). */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    const { port } = this.#server.address() as AddressInfo;
    kc.loadFromOptions({
      clusters: [{ name: 'proxy', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'anonymous' }],
      contexts: [{ name: 'proxy', cluster: 'proxy', user: 'anonymous' }],
      currentContext: 'proxy',
    });
    return kc;
  }

  /** The next watch request is answered with 410: an HTTP status or a 200 with one ERROR event. */
  failNextWatchWithGone(mode: 'status' | 'event'): void {
    this.#goneMode = mode;
  }

  /**
   * Watch streams open now: the API server has answered them and events flow. A watch request only
   * received (see `requests`) may still be on its way upstream, out of reach of `endOpenWatches()`.
   */
  get openWatches(): number {
    return this.#openWatches.size;
  }

  /** Ends every open watch stream cleanly, as the API server does when `timeoutSeconds` expires. */
  endOpenWatches(): void {
    for (const res of this.#openWatches) res.end();
    this.#openWatches.clear();
  }

  /** Parks every new request until `release()`. */
  hold(): void {
    this.#holding = true;
  }

  release(): void {
    this.#holding = false;
    for (const resume of this.#held.splice(0)) resume();
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => {
      this.#server.close(() => {
        resolve();
      });
    });
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://proxy');
    this.requests.push(url);
    if (this.#holding) {
      this.#held.push(() => {
        this.#handle2(url, req, res);
      });
      return;
    }
    this.#handle2(url, req, res);
  }

  #handle2(url: URL, req: http.IncomingMessage, res: http.ServerResponse): void {
    const isWatch = url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true';
    if (isWatch && this.#goneMode !== undefined) {
      const mode = this.#goneMode;
      this.#goneMode = undefined;
      const status = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'too old resource version',
        reason: mode === 'status' ? 'Gone' : 'Expired',
        code: 410,
      };
      if (mode === 'status')
        res.writeHead(410, { 'content-type': 'application/json' }).end(JSON.stringify(status));
      else
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ type: 'ERROR', object: status }) + '\n');
      return;
    }
    void this.#forward(url, req, res, isWatch);
  }

  async #forward(
    url: URL,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    isWatch: boolean,
  ): Promise<void> {
    const cluster = this.#upstream.getCurrentCluster();
    if (cluster === null) throw new Error('upstream kubeconfig has no cluster');
    const target = new URL(url.pathname + url.search, cluster.server);
    const options: https.RequestOptions = {
      method: req.method ?? 'GET',
      headers: { accept: req.headers.accept ?? '*/*' },
    };
    await this.#upstream.applyToHTTPSOptions(options);
    const upstreamReq = https.request(target, options, (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
      if (isWatch) {
        this.#openWatches.add(res);
        res.on('close', () => this.#openWatches.delete(res));
        upstreamRes.on('data', (chunk: Buffer) => {
          if (!res.writableEnded) res.write(chunk);
        });
        upstreamRes.on('end', () => res.end());
      } else {
        upstreamRes.pipe(res);
      }
    });
    upstreamReq.on('error', () => res.destroy());
    res.on('close', () => upstreamReq.destroy());
    req.pipe(upstreamReq);
  }
}

/** A copy of `kc` whose current cluster points at `server` (same CA and credentials). */
export function withServer(kc: KubeConfig, server: string): KubeConfig {
  const copy = new KubeConfig();
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (cluster === null || user === null) throw new Error('kubeconfig has no current cluster/user');
  copy.loadFromOptions({
    clusters: [{ ...cluster, server }],
    users: [user],
    contexts: [{ name: 'ctx', cluster: cluster.name, user: user.name }],
    currentContext: 'ctx',
  });
  return copy;
}
