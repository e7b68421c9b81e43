import type { Clock } from '@loopwright/core';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnFreePort } from '../listen.ts';
import { defaultErrorCode, FakeHcloudFaults, type FakeHcloudFault } from './faults.ts';
import { compileLabelSelector, LabelSelectorError } from './label-selector.ts';
import { FakeHcloudRequestLog } from './request-log.ts';
import {
  FAKE_HCLOUD_LOCATIONS,
  FAKE_HCLOUD_SERVER_STATUSES,
  FakeHcloudNetworks,
  FakeHcloudServers,
  type FakeHcloudNetwork,
  type FakeHcloudServer,
} from './state.ts';
import { FakeHcloudTokenBucket } from './token-bucket.ts';

/** The bearer token the fake accepts unless `startFakeHcloud({ token })` says otherwise. */
export const FAKE_HCLOUD_TOKEN = 'fake-hcloud-token-0123456789abcdef0123456789abcdef0123456789abcdef';

export interface FakeHcloudOptions {
  /** The only bearer token accepted (default {@link FAKE_HCLOUD_TOKEN}). */
  token?: string;
  /** Token bucket (default: the real API's 3600 requests, refilled 1 per second). */
  rateLimit?: { limit?: number; refillPerSecond?: number };
  /**
   * Time source for the bucket, `created` and the request log: its `wallTime()` (default `Date.now`). Share
   * a core `FakeClock` with the client under test so the bucket refills while the client waits.
   */
  clock?: Pick<Clock, 'wallTime'>;
  /**
   * The address to listen on (default `127.0.0.1`). Pods on a test node reach the fake only at the host's
   * address on the node bridge (`loadTestNode().hostAddress`).
   */
  host?: string;
}

export interface FakeHcloud {
  /** Base URL ending in `/v1`, e.g. `http://127.0.0.1:41234/v1` (at `host`): the client's endpoint. */
  readonly url: string;
  readonly token: string;
  readonly servers: FakeHcloudServers;
  readonly networks: FakeHcloudNetworks;
  readonly faults: FakeHcloudFaults;
  readonly requests: FakeHcloudRequestLog;
  /** The project's token bucket (`rateLimit.set(0)` starts a test at the limit). */
  readonly rateLimit: FakeHcloudTokenBucket;
  /** Stops the server, dropping open connections and pending latency timers. */
  close(): Promise<void>;
}

class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  constructor(status: number, code: string, message: string, details: unknown = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

function invalidInput(field: string, message: string): ApiError {
  return new ApiError(400, 'invalid_input', `invalid input in field '${field}'`, {
    fields: [{ name: field, messages: [message] }],
  });
}

const maxPerPage = 50;
const defaultPerPage = 25;

function positiveInt(query: URLSearchParams, field: string, fallback: number): number {
  const raw = query.get(field);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw invalidInput(field, 'must be an integer >= 1');
  return Number(raw);
}

/** Slices one page and builds the `meta.pagination` object exactly like the API. */
function paginate<T>(items: readonly T[], query: URLSearchParams): { page: T[]; meta: object } {
  const page = positiveInt(query, 'page', 1);
  const perPage = positiveInt(query, 'per_page', defaultPerPage);
  if (perPage > maxPerPage) throw invalidInput('per_page', `must be between 1 and ${maxPerPage}`);
  const lastPage = Math.max(1, Math.ceil(items.length / perPage));
  return {
    page: items.slice((page - 1) * perPage, page * perPage),
    meta: {
      pagination: {
        page,
        per_page: perPage,
        previous_page: page > 1 ? Math.min(page - 1, lastPage) : null,
        next_page: page < lastPage ? page + 1 : null,
        last_page: lastPage,
        total_entries: items.length,
      },
    },
  };
}

/**
 * `items` in the order the repeated `sort` parameters ask for (`id`, `name`, `created`, each optionally
 * `:asc` or `:desc`; the first decides, later ones break ties), else by id as the API lists them.
 * Anything else is 400 `invalid_input`, as the API answers it.
 */
function sorted<T extends { id: number; name: string; created?: string }>(
  items: readonly T[],
  query: URLSearchParams,
  fields: readonly ('id' | 'name' | 'created')[],
): T[] {
  const keys = query.getAll('sort').map((raw) => {
    const [field = '', direction = 'asc', ...rest] = raw.split(':');
    if (
      !(fields as readonly string[]).includes(field) ||
      !['asc', 'desc'].includes(direction) ||
      rest.length > 0
    )
      throw invalidInput(
        'sort',
        `invalid sort value '${raw}'; allowed: ${fields.join(', ')} with :asc or :desc`,
      );
    return { field: field as 'id' | 'name' | 'created', sign: direction === 'desc' ? -1 : 1 };
  });
  const compare = (a: T, b: T, field: 'id' | 'name' | 'created'): number => {
    const [x, y] = [a[field] ?? '', b[field] ?? ''];
    return x < y ? -1 : x > y ? 1 : 0;
  };
  return [...items].sort((a, b) => {
    for (const { field, sign } of keys) {
      const order = compare(a, b, field);
      if (order !== 0) return sign * order;
    }
    return a.id - b.id;
  });
}

function labelFilter(query: URLSearchParams): (labels: Readonly<Record<string, string>>) => boolean {
  const selector = query.get('label_selector');
  if (selector === null) return () => true;
  try {
    return compileLabelSelector(selector);
  } catch (error) {
    if (error instanceof LabelSelectorError) throw invalidInput('label_selector', error.message);
    throw error;
  }
}

function idParam(raw: string): number {
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw invalidInput('id', 'must be an integer');
  return Number(raw);
}

function notFound(resource: string): ApiError {
  return new ApiError(404, 'not_found', `${resource} not found`);
}

/**
 * Starts a fake Hetzner Cloud API on 127.0.0.1 (or `options.host`; random port) serving, in the real wire format:
 * `GET /v1/servers` (`name`, `label_selector`, repeated `status`, repeated `sort`, `page`, `per_page`),
 * `GET /v1/servers/{id}`, `GET /v1/locations` (`name`), `GET /v1/locations/{id}`, `GET /v1/networks`
 * (`name`, `label_selector`) and `GET /v1/networks/{id}`. Everything else is 404 `not_found`.
 */
export async function startFakeHcloud(options: FakeHcloudOptions = {}): Promise<FakeHcloud> {
  const token = options.token ?? FAKE_HCLOUD_TOKEN;
  const now = options.clock ? options.clock.wallTime.bind(options.clock) : Date.now;
  const servers = new FakeHcloudServers(now);
  const networks = new FakeHcloudNetworks(now);
  const faults = new FakeHcloudFaults();
  const requests = new FakeHcloudRequestLog();
  const bucket = new FakeHcloudTokenBucket(
    options.rateLimit?.limit ?? 3600,
    options.rateLimit?.refillPerSecond ?? 1,
    now,
  );
  const latencyTimers = new Set<NodeJS.Timeout>();

  function networkJson(network: FakeHcloudNetwork): FakeHcloudNetwork {
    const attached = servers
      .snapshot()
      .filter((server) => server.private_net.some((net) => net.network === network.id));
    return { ...network, servers: attached.map((server) => server.id) };
  }

  /** Answers an authenticated request that got a rate-limit token. */
  function route(method: string, path: string, query: URLSearchParams): { status: number; body: unknown } {
    if (method !== 'GET') throw new ApiError(404, 'not_found', `${method} ${path} is not served by the fake`);
    if (path === '/v1/servers') {
      const name = query.get('name');
      const statuses = query.getAll('status');
      for (const status of statuses) {
        if (!(FAKE_HCLOUD_SERVER_STATUSES as readonly string[]).includes(status))
          throw invalidInput('status', `unknown status '${status}'`);
      }
      const matchesLabels = labelFilter(query);
      const matching = servers
        .snapshot()
        .filter(
          (server: FakeHcloudServer) =>
            (name === null || server.name === name) &&
            (statuses.length === 0 || statuses.includes(server.status)) &&
            matchesLabels(server.labels),
        );
      const { page, meta } = paginate(sorted(matching, query, ['id', 'name', 'created']), query);
      return { status: 200, body: { servers: page, meta } };
    }
    if (path === '/v1/locations') {
      const name = query.get('name');
      const { page, meta } = paginate(
        sorted(
          FAKE_HCLOUD_LOCATIONS.filter((l) => name === null || l.name === name),
          query,
          ['id', 'name'],
        ),
        query,
      );
      return { status: 200, body: { locations: page, meta } };
    }
    if (path === '/v1/networks') {
      const name = query.get('name');
      const matchesLabels = labelFilter(query);
      const matching = networks
        .list()
        .filter((n) => (name === null || n.name === name) && matchesLabels(n.labels));
      const { page, meta } = paginate(
        sorted(matching, query, ['id', 'name', 'created']).map(networkJson),
        query,
      );
      return { status: 200, body: { networks: page, meta } };
    }
    const single = /^\/v1\/(servers|locations|networks)\/([^/]+)$/.exec(path);
    if (single) {
      const id = idParam(single[2] ?? '');
      if (single[1] === 'servers') {
        const server = servers.snapshot().find((s) => s.id === id);
        if (!server) throw notFound('server');
        return { status: 200, body: { server } };
      }
      if (single[1] === 'locations') {
        const found = FAKE_HCLOUD_LOCATIONS.find((l) => l.id === id);
        if (!found) throw notFound('location');
        return { status: 200, body: { location: found } };
      }
      const network = networks.get(id);
      if (!network) throw notFound('network');
      return { status: 200, body: { network: networkJson(network) } };
    }
    throw new ApiError(404, 'not_found', `${path} not found`);
  }

  function send(
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string>,
  ): void {
    if (response.destroyed) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    response.writeHead(status, {
      'Content-Type': typeof body === 'string' ? 'text/html' : 'application/json',
      'Content-Length': Buffer.byteLength(text),
      ...headers,
    });
    response.end(text);
  }

  function sendFault(response: ServerResponse, fault: FakeHcloudFault): void {
    const body = fault.body ?? {
      error: {
        code: fault.code ?? defaultErrorCode(fault.status),
        message: fault.message ?? 'injected fault',
        details: null,
      },
    };
    // JSON answers look like the API's own and carry its headers; raw text looks like a gateway's and does not.
    send(response, fault.status, body, {
      ...(typeof body === 'string' ? {} : bucket.headers()),
      ...fault.headers,
    });
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const at = now();
    const url = new URL(request.url ?? '/', 'http://fake');
    const method = request.method ?? 'GET';
    const path = url.pathname;
    if (faults.latencyMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          latencyTimers.delete(timer);
          resolve();
        }, faults.latencyMs);
        latencyTimers.add(timer);
      });
      // A client that gave up still cost the API the request: it is answered into the void, charged
      // and logged like any other.
    }
    let status: number;
    const fault = faults.take(path);
    if (fault) {
      status = fault.status;
      if (fault.reset) {
        if (!response.destroyed) request.socket.resetAndDestroy();
      } else sendFault(response, fault);
    } else if (faults.isUnauthorized || request.headers.authorization !== `Bearer ${token}`) {
      status = 401;
      send(
        response,
        status,
        { error: { code: 'unauthorized', message: 'unable to authenticate', details: null } },
        bucket.headers(),
      );
    } else if (!bucket.take()) {
      status = 429;
      send(
        response,
        status,
        {
          error: {
            code: 'rate_limit_exceeded',
            message: `limit of ${bucket.limit} requests per hour reached`,
            details: null,
          },
        },
        bucket.headers(),
      );
    } else {
      let result: { status: number; body: unknown };
      try {
        result = route(method, path, url.searchParams);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        result = {
          status: error.status,
          body: { error: { code: error.code, message: error.message, details: error.details } },
        };
      }
      status = result.status;
      send(response, status, result.body, bucket.headers());
    }
    requests.record({ method, path, endpoint: endpointOf(path), query: url.searchParams, status, at });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        send(
          response,
          500,
          { error: { code: 'server_error', message: `fake hcloud bug: ${String(error)}`, details: null } },
          {},
        );
    });
  });
  const base = await listenOnFreePort(server, options.host ?? '127.0.0.1');

  return {
    url: `${base}/v1`,
    token,
    servers,
    networks,
    faults,
    requests,
    rateLimit: bucket,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of latencyTimers) clearTimeout(timer);
        latencyTimers.clear();
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
        server.closeAllConnections();
      }),
  };
}

/** `/v1/servers/42` -> `/v1/servers/{id}`, so logs can be counted per endpoint. */
function endpointOf(path: string): string {
  return path.replace(/^(\/v1\/[a-z_]+\/)[^/]+/, '$1{id}');
}
