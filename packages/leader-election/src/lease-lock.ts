import { KubeApiError, KubeApiFailure, isNotFound, type KubeTransport } from '@loopwright/client';
import { formatMicroTime, parseMicroTime } from './micro-time.ts';
import type { LeaderElectionRecord, ResourceLock } from './resource-lock.ts';

/** Options of {@link LeaseLock}. */
export interface LeaseLockOptions {
  /**
   * The API server connection (credentials re-applied per request, rate limit, request metrics).
   * Failed requests reject with its `KubeApiError`, e.g. `isConflict(error)` when someone else wrote
   * the Lease since this lock read it.
   */
  transport: KubeTransport;
  namespace: string;
  /** The Lease's name; every candidate of one election uses the same. */
  name: string;
  /** This candidate's identity (`holderIdentity`); unique per process, e.g. the pod name. */
  identity: string;
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
  readonly #transport: KubeTransport;
  readonly #collectionPath: string;
  #lease: LeaseObject | undefined;

  constructor(options: LeaseLockOptions) {
    if (options.identity === '') throw new TypeError('LeaseLock: identity must not be empty');
    this.#options = options;
    this.#transport = options.transport;
    this.#collectionPath = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(options.namespace)}/leases`;
  }

  identity(): string {
    return this.#options.identity;
  }

  describe(): string {
    return `${this.#options.namespace}/${this.#options.name}`;
  }

  async get(signal: AbortSignal): Promise<LeaderElectionRecord | undefined> {
    const path = this.#objectPath();
    let lease: unknown;
    try {
      lease = await this.#transport.requestJson({ path, signal });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    return this.#accept(lease, { method: 'GET', path });
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    const body: LeaseObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.#options.name, namespace: this.#options.namespace },
      spec: leaseSpec(record),
    };
    const path = this.#collectionPath;
    this.#accept(await this.#transport.requestJson({ method: 'POST', path, body, signal }), {
      method: 'POST',
      path,
    });
  }

  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    if (this.#lease === undefined) {
      throw new Error(`Lease ${this.describe()} not read yet: call get or create before update`);
    }
    const body: LeaseObject = { ...this.#lease, spec: leaseSpec(record) };
    const path = this.#objectPath();
    this.#accept(await this.#transport.requestJson({ method: 'PUT', path, body, signal }), {
      method: 'PUT',
      path,
    });
  }

  #objectPath(): string {
    return `${this.#collectionPath}/${encodeURIComponent(this.#options.name)}`;
  }

  /** Remembers the returned Lease as the base of the next update, returns its record. */
  #accept(lease: unknown, request: { method: string; path: string }): LeaderElectionRecord {
    if (typeof lease !== 'object' || lease === null) {
      throw new KubeApiError(`${request.method} Lease ${this.describe()}: the response is not an object`, {
        failure: KubeApiFailure.Decode,
        ...request,
      });
    }
    const object = lease as LeaseObject;
    const record = leaderElectionRecord(object.spec ?? {}, this.describe(), request);
    this.#lease = object;
    return record;
  }
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

/**
 * Reads a spec with client-go's defaults for absent fields (a Lease created by hand may lack any). A
 * field of the wrong type is a `decode` failure of the request that returned it.
 */
function leaderElectionRecord(
  spec: LeaseSpec,
  lease: string,
  request: { method: string; path: string },
): LeaderElectionRecord {
  const undecodable = (message: string, cause?: unknown): KubeApiError =>
    new KubeApiError(`Lease ${lease}: ${message}`, { failure: KubeApiFailure.Decode, cause, ...request });
  const field = <T>(name: string, value: unknown, type: 'string' | 'number', fallback: T): T => {
    if (value === undefined || value === null) return fallback;
    if (typeof value !== type) {
      throw undecodable(`spec.${name} is not a ${type}: ${JSON.stringify(value)}`);
    }
    return value as T;
  };
  const time = (name: string, value: unknown): number | undefined => {
    const text = field<string | undefined>(name, value, 'string', undefined);
    if (text === undefined) return undefined;
    try {
      return parseMicroTime(text);
    } catch (error) {
      throw undecodable(`spec.${name} is not a timestamp`, error);
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
