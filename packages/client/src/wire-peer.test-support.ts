/**
 * A tiny HTTP peer for the transport's tests: what reaches the wire, and how each answer is turned into
 * a result or an error. Behaviour against the real API server is in the integration tests.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from './api-error.ts';
import type { KubeTransportOptions } from './kube-request.ts';
import { KubeTransport } from './transport.ts';

export type Route = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The default answer: 200 with a small JSON object. */
const answerOk: Route = (_req, res) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Namespace"}');

/**
 * The peer of one test file, listening for its tests (`node:test`'s before/after hooks of the file are
 * registered by {@link wirePeer}): `route` answers each request, reset to {@link answerOk} before
 * every test, and `received` collects each one.
 */
export interface WirePeer {
  route: Route;
  /** Every request of the current test, in arrival order. */
  readonly received: Received[];
  /** Connections opened since the peer started. */
  readonly connections: number;
  /** `127.0.0.1:<port>`. */
  readonly host: string;
  /** A KubeConfig of the peer below the path `/prefix/`, with a bearer token. */
  readonly kc: KubeConfig;
  /** Resolves once `count` requests in total (this test) have reached the peer. */
  requestsArrived(count: number): Promise<void>;
}

export function wirePeer(): WirePeer {
  const received: Received[] = [];
  const arrived: (() => void)[] = [];
  let connections = 0;
  let host = '';
  let kc: KubeConfig | undefined;
  const peer = {
    route: answerOk,
    received,
    get connections() {
      return connections;
    },
    get host() {
      return host;
    },
    get kc() {
      assert.ok(kc, 'the peer is listening');
      return kc;
    },
    async requestsArrived(count: number): Promise<void> {
      while (received.length < count) await new Promise<void>((resolve) => arrived.push(resolve));
    },
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      for (const wake of arrived.splice(0)) wake();
      peer.route(req, res, body);
    });
  });
  server.on('connection', () => connections++);
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    kc = kubeConfig(`http://${host}/prefix/`);
  });
  beforeEach(() => {
    peer.route = answerOk;
    received.length = 0;
    arrived.length = 0;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return peer;
}

export function kubeConfig(serverUrl: string, token = 'the-token'): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'peer', server: serverUrl, skipTLSVerify: true }],
    users: [{ name: 'user', token }],
    contexts: [{ name: 'ctx', cluster: 'peer', user: 'user' }],
    currentContext: 'ctx',
  });
  return config;
}

/** A transport of `config` without a rate limit unless `options` set one. */
export function unlimitedTransport(config: KubeConfig, options: KubeTransportOptions = {}): KubeTransport {
  return new KubeTransport(config, { rateLimit: false, ...options });
}

export function statusBody(code: number, reason: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, ...extra });
}

export async function rejection(promise: Promise<unknown>): Promise<KubeApiError> {
  const error: unknown = await promise.then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof KubeApiError, `a KubeApiError, got ${String(error)}`);
  return error;
}

export async function collect(documents: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const document of documents) out.push(document);
  return out;
}
