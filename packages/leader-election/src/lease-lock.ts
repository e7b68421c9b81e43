import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { formatMicroTime, parseMicroTime } from './micro-time.ts';
import type { LeaderElectionRecord, ResourceLock } from './resource-lock.ts';

/** Options of {@link LeaseLock}. */
export interface LeaseLockOptions {
  /** Server, TLS and credentials; re-applied per request so rotating tokens (exec plugins) work. */
  kc: KubeConfig;
  namespace: string;
  /** The Lease's name; every candidate of one election uses the same. */
  name: string;
  /** This candidate's identity (`holderIdentity`); unique per process, e.g. the pod name. */
  identity: string;
  /**
   * Sees every Lease request when it completes (e.g. for `rest_client_*` metrics); `statusCode` is
   * undefined when no response arrived. Must not throw (errors are ignored).
   */
  observeRequest?: (observation: {
    method: string;
    url: URL;
    statusCode: number | undefined;
    durationSeconds: number;
  }) => void;
}

/** Largest response body read; a Lease or a Status is a few KiB. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A Lease request failed. `statusCode`/`statusReason` come from the HTTP status and the API server's
 * Status object (e.g. 409 / `Conflict` when someone else wrote the Lease since we read it); both are
 * `undefined` for network failures and aborted requests, whose error is the `cause`.
 */
export class LeaseRequestError extends Error {
  override readonly name = 'LeaseRequestError';
  readonly statusCode: number | undefined;
  readonly statusReason: string | undefined;

  constructor(message: string, fields: { statusCode?: number; statusReason?: string; cause?: unknown }) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.statusCode = fields.statusCode;
    this.statusReason = fields.statusReason;
  }

  /** Someone else changed the Lease since this lock last read or wrote it. */
  get isConflict(): boolean {
    return this.statusCode === 409 || this.statusReason === 'Conflict';
  }
}

/** The Lease object as last returned by the server; written back whole so metadata survives updates. */
interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; [field: string]: unknown };
  spec?: LeaseSpec;
  [field: string]: unknown;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  [field: string]: unknown;
}

/**
 * A {@link ResourceLock} on a `coordination.k8s.io/v1` Lease, wire-compatible with client-go's
 * `LeaseLock`: a Go candidate and this one can share the Lease.
 *
 * The JSON bodies are built here rather than by client-node's typed API because the API server
 * requires MicroTime (six fractional digits) for `acquireTime`/`renewTime`, and client-node 2.0.1
 * serialises a plain `Date` with three digits and returns these fields as unparsed strings.
 * `update` is a PUT of the last object read or written, with its `metadata.resourceVersion`, so the
 * API server answers 409 Conflict if anyone wrote in between. The spec is replaced as a whole (as
 * client-go does); labels and annotations on the Lease are kept.
 *
 * RBAC: `get`, `create`, `update` on `leases.coordination.k8s.io` in the namespace.
 */
export class LeaseLock implements ResourceLock {
  readonly #options: LeaseLockOptions;
  readonly #collectionPath: string;
  #lease: LeaseObject | undefined;

  constructor(options: LeaseLockOptions) {
    if (options.identity === '') throw new TypeError('LeaseLock: identity must not be empty');
    this.#options = options;
    this.#collectionPath = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(options.namespace)}/leases`;
  }

  identity(): string {
    return this.#options.identity;
  }

  describe(): string {
    return `${this.#options.namespace}/${this.#options.name}`;
  }

  async get(signal: AbortSignal): Promise<LeaderElectionRecord | undefined> {
    const response = await this.#request('GET', this.#objectPath(), undefined, signal);
    if (response.statusCode === 404) return undefined;
    return this.#accept(response, 200);
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    const body: LeaseObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.#options.name, namespace: this.#options.namespace },
      spec: leaseSpec(record),
    };
    this.#accept(await this.#request('POST', this.#collectionPath, body, signal), 201);
  }

  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    if (this.#lease === undefined) {
      throw new LeaseRequestError(
        `Lease ${this.describe()} not read yet: call get or create before update`,
        {},
      );
    }
    const body: LeaseObject = { ...this.#lease, spec: leaseSpec(record) };
    this.#accept(await this.#request('PUT', this.#objectPath(), body, signal), 200);
  }

  #objectPath(): string {
    return `${this.#collectionPath}/${encodeURIComponent(this.#options.name)}`;
  }

  /** Checks the status, remembers the returned Lease as the base of the next update, returns its record. */
  #accept(response: { statusCode: number; body: string }, expectedStatus: number): LeaderElectionRecord {
    if (response.statusCode !== expectedStatus) throw errorFromResponse(this.describe(), response);
    let lease: LeaseObject;
    try {
      lease = JSON.parse(response.body) as LeaseObject;
    } catch (error) {
      throw new LeaseRequestError(`Lease ${this.describe()}: undecodable response`, { cause: error });
    }
    const record = leaderElectionRecord(lease.spec ?? {}, this.describe());
    this.#lease = lease;
    return record;
  }

  async #request(
    method: string,
    path: string,
    body: LeaseObject | undefined,
    signal: AbortSignal,
  ): Promise<{ statusCode: number; body: string }> {
    const cluster = this.#options.kc.getCurrentCluster();
    if (cluster === null) throw new LeaseRequestError('kubeconfig has no current cluster', {});
    const url = new URL(cluster.server);
    url.pathname = url.pathname.replace(/\/$/, '') + path;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    const options: https.RequestOptions = { method, headers };
    await this.#options.kc.applyToHTTPSOptions(options);
    const started = performance.now();
    let statusCode: number | undefined;
    try {
      const response = await send(url, { ...options, signal }, payload);
      statusCode = response.statusCode;
      return response;
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      throw new LeaseRequestError(`${method} Lease ${this.describe()} failed: ${text}`, { cause: error });
    } finally {
      try {
        this.#options.observeRequest?.({
          method,
          url,
          statusCode,
          durationSeconds: (performance.now() - started) / 1000,
        });
      } catch {
        // An observer is for metrics; it must never break the election.
      }
    }
  }
}

function send(
  url: URL,
  options: https.RequestOptions,
  payload: string | undefined,
): Promise<{ statusCode: number; body: string }> {
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'http:' ? http : https;
    const request = transport.request(url, options, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          response.destroy(new Error(`response larger than ${MAX_BODY_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', reject);
      response.on('end', () => {
        resolve({ statusCode: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.on('error', reject);
    request.end(payload);
  });
}

function errorFromResponse(lease: string, response: { statusCode: number; body: string }): LeaseRequestError {
  let status: { reason?: unknown; message?: unknown; code?: unknown } = {};
  try {
    const parsed = JSON.parse(response.body) as unknown;
    if (typeof parsed === 'object' && parsed !== null) status = parsed;
  } catch {
    // Not a Status (e.g. a proxy's error page): classify by the HTTP status alone.
  }
  const statusReason = typeof status.reason === 'string' ? status.reason : undefined;
  const statusCode = typeof status.code === 'number' ? status.code : response.statusCode;
  const message = typeof status.message === 'string' ? status.message : `HTTP ${response.statusCode}`;
  const summary = statusReason === undefined ? String(statusCode) : `${statusCode} ${statusReason}`;
  return new LeaseRequestError(`Lease ${lease}: ${summary}: ${message}`, {
    statusCode,
    ...(statusReason === undefined ? {} : { statusReason }),
  });
}

/** The spec client-go writes: every field present, an empty holder included (that is a release). */
function leaseSpec(record: LeaderElectionRecord): LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    ...(record.acquireTime === undefined ? {} : { acquireTime: formatMicroTime(record.acquireTime) }),
    ...(record.renewTime === undefined ? {} : { renewTime: formatMicroTime(record.renewTime) }),
    leaseTransitions: record.leaseTransitions,
  };
}

/** Reads a spec with client-go's defaults for absent fields (a Lease created by hand may lack any). */
function leaderElectionRecord(spec: LeaseSpec, lease: string): LeaderElectionRecord {
  const field = <T>(name: string, value: unknown, type: 'string' | 'number', fallback: T): T => {
    if (value === undefined || value === null) return fallback;
    if (typeof value !== type) {
      throw new LeaseRequestError(
        `Lease ${lease}: spec.${name} is not a ${type}: ${JSON.stringify(value)}`,
        {},
      );
    }
    return value as T;
  };
  const time = (name: string, value: unknown): number | undefined => {
    const text = field<string | undefined>(name, value, 'string', undefined);
    if (text === undefined) return undefined;
    try {
      return parseMicroTime(text);
    } catch (error) {
      throw new LeaseRequestError(`Lease ${lease}: spec.${name} is not a timestamp`, { cause: error });
    }
  };
  return {
    holderIdentity: field('holderIdentity', spec.holderIdentity, 'string', ''),
    leaseDurationSeconds: field('leaseDurationSeconds', spec.leaseDurationSeconds, 'number', 0),
    acquireTime: time('acquireTime', spec.acquireTime),
    renewTime: time('renewTime', spec.renewTime),
    leaseTransitions: field('leaseTransitions', spec.leaseTransitions, 'number', 0),
  };
}
