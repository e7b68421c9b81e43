import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

/** Passes when it returns (or resolves to) `true`; `false`, a throw or a rejection fail it. */
export type HealthCheck = () => boolean | Promise<boolean>;

export interface HealthServerOptions {
  /** TCP port; 0 picks a free one (read it back from `HealthServer.port`). */
  port: number;
  /** Interface to bind. Default: all interfaces, as the kubelet probes the pod IP. */
  host?: string;
  /** Served on `/metrics`. */
  registry: Pick<Registry, 'metrics' | 'contentType'>;
  /**
   * The `ready` check of `/readyz`. In Loopwright: the informer caches have synced. It does not depend
   * on leadership, so a standby replica is ready and its Service endpoint stays up for /metrics.
   */
  isReady: HealthCheck;
  /** Extra named checks; names must differ from the built-in `ping` (healthz) and `ready` (readyz). */
  checks?: {
    healthz?: Readonly<Record<string, HealthCheck>>;
    readyz?: Readonly<Record<string, HealthCheck>>;
  };
  /** A check still pending after this long fails with "timed out". Default 5000 ms. */
  checkTimeoutMs?: number;
  /**
   * Which endpoints this server answers (the others are 404), for probes and metrics on separate
   * addresses as controller-runtime serves them. Default `all`.
   */
  serve?: 'all' | 'probes' | 'metrics';
}

export interface HealthServer {
  /** The bound port (the chosen one when `port` was 0). */
  readonly port: number;
  /** Stops listening and drops every connection, keep-alive ones included. Never rejects; idempotent. */
  close(): Promise<void>;
}

/** The server could not bind, e.g. EADDRINUSE or EACCES; `cause` is the Node error. */
export class HealthServerListenError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'HealthServerListenError';
  }
}

const TEXT = 'text/plain; charset=utf-8';
const DEFAULT_CHECK_TIMEOUT_MS = 5000;
const MAX_REASON_LENGTH = 200;

interface CheckStatus {
  name: string;
  failure: string | undefined;
}

/**
 * Serves `GET|HEAD /metrics`, `/healthz` and `/readyz`, or some of them (see `serve`; 404 for other
 * paths, 405 for other methods).
 * `/healthz` and `/readyz` answer `ok` when every check passes; with `?verbose`, or when a check fails,
 * they list each check as `[+]name ok` / `[-]name failed: reason` (the format of Kubernetes components).
 * A failing check yields 500 on /healthz (as Kubernetes) and 503 on /readyz; a failing metrics
 * collection yields 500. The handler never throws.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const { registry, isReady, checkTimeoutMs = DEFAULT_CHECK_TIMEOUT_MS, serve = 'all' } = options;
  const served = new Set(
    [
      serve !== 'probes' ? '/metrics' : undefined,
      serve !== 'metrics' ? '/healthz' : undefined,
      serve !== 'metrics' ? '/readyz' : undefined,
    ].filter((path) => path !== undefined),
  );
  const healthzChecks = withBuiltIn('ping', () => true, options.checks?.healthz);
  const readyzChecks = withBuiltIn('ready', isReady, options.checks?.readyz);

  const runChecks = async (endpoint: string, checks: [string, HealthCheck][], verbose: boolean) => {
    const statuses = await Promise.all(checks.map(([name, check]) => runCheck(name, check, checkTimeoutMs)));
    const failed = statuses.some((status) => status.failure !== undefined);
    if (!failed && !verbose) return { failed, body: 'ok' };
    const lines = statuses.map(({ name, failure }) =>
      failure === undefined ? `[+]${name} ok` : `[-]${name} failed: ${failure}`,
    );
    lines.push(`${endpoint} check ${failed ? 'failed' : 'passed'}`);
    return { failed, body: `${lines.join('\n')}\n` };
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    // Split by hand: new URL() would read a path such as "//x/metrics" as a host.
    const target = request.url ?? '/';
    const queryStart = target.indexOf('?');
    const path = queryStart === -1 ? target : target.slice(0, queryStart);
    const verbose = queryStart !== -1 && new URLSearchParams(target.slice(queryStart + 1)).has('verbose');

    if (!served.has(path)) {
      respond(response, 404, '404 page not found\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      respond(response, 405, 'method not allowed\n', TEXT, { Allow: 'GET, HEAD' });
      return;
    }
    if (path === '/metrics') {
      let exposition: string;
      try {
        exposition = await registry.metrics();
      } catch (error) {
        respond(response, 500, `error collecting metrics: ${describe(error)}\n`);
        return;
      }
      respond(response, 200, exposition, registry.contentType);
      return;
    }
    const endpoint = path === '/healthz' ? 'healthz' : 'readyz';
    const { failed, body } = await runChecks(
      endpoint,
      path === '/healthz' ? healthzChecks : readyzChecks,
      verbose,
    );
    respond(response, failed ? (endpoint === 'healthz' ? 500 : 503) : 200, body);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else respond(response, 500, `internal error: ${describe(error)}\n`);
    });
  });

  await new Promise<void>((resolve, reject) => {
    const onListenError = (error: Error) => {
      const where = `${options.host ?? '*'}:${options.port}`;
      reject(
        new HealthServerListenError(`health server cannot listen on ${where}: ${error.message}`, {
          cause: error,
        }),
      );
    };
    server.once('error', onListenError);
    server.listen({ port: options.port, host: options.host }, () => {
      server.off('error', onListenError);
      resolve();
    });
  });
  // After binding, the only server errors are failed accepts (e.g. EMFILE); the server keeps listening,
  // so they must not crash the process through an unhandled 'error' event.
  server.on('error', () => undefined);

  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // The callback receives ERR_SERVER_NOT_RUNNING on a second close: still a success for the caller.
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

function withBuiltIn(
  builtInName: string,
  builtIn: HealthCheck,
  extra: Readonly<Record<string, HealthCheck>> | undefined,
): [string, HealthCheck][] {
  const extraChecks = Object.entries(extra ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (extraChecks.some(([name]) => name === builtInName)) {
    throw new TypeError(`health check name "${builtInName}" is reserved for the built-in check`);
  }
  return [[builtInName, builtIn], ...extraChecks];
}

async function runCheck(name: string, check: HealthCheck, timeoutMs: number): Promise<CheckStatus> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckStatus>((resolve) => {
    timer = setTimeout(() => {
      resolve({ name, failure: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);
    // A hanging check must not keep the process alive after close().
    timer.unref();
  });
  const evaluated = (async (): Promise<CheckStatus> => {
    try {
      return { name, failure: (await check()) ? undefined : 'returned false' };
    } catch (error) {
      return { name, failure: describe(error) };
    }
  })();
  try {
    return await Promise.race([evaluated, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** One short line: bodies are read by humans with curl, and may be shown in probe events. */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = message.split('\n', 1)[0] ?? '';
  return firstLine.length > MAX_REASON_LENGTH ? `${firstLine.slice(0, MAX_REASON_LENGTH)}...` : firstLine;
}

function respond(
  response: ServerResponse,
  status: number,
  body: string,
  contentType = TEXT,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  // Node omits the body of a HEAD response by itself and keeps Content-Length.
  response.end(body);
}
