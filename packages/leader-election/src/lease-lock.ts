import {
  KubeApiError,
  KubeApiFailure,
  type KubeClient,
  type KubeObject,
  type Resource,
  type ResourceType,
} from '@loopwright/client';
import { formatMicroTime, parseMicroTime } from './micro-time.ts';
import type { LeaderElectionRecord, ResourceLock } from './resource-lock.ts';

/** Options of {@link LeaseLock}. */
export interface LeaseLockOptions {
  /**
   * The API server connection (credentials re-applied per request, rate limit, request metrics).
   * Failed requests reject with its `KubeApiError`, e.g. `isConflict(error)` when someone else wrote
   * the Lease since this lock read it.
   */
  client: KubeClient;
  namespace: string;
  /** The Lease's name; every candidate of one election uses the same. */
  name: string;
  /** This candidate's identity (`holderIdentity`); unique per process, e.g. the pod name. */
  identity: string;
}

/**
 * A Lease as the server returns it: the lock keeps the last one and writes it back whole, so its
 * metadata (labels, annotations, fields this lock does not know) survives updates.
 */
interface LeaseObject extends KubeObject {
  spec?: LeaseSpec;
}

/** `coordination.k8s.io/v1` Leases: the resource of every lock and member Lease. */
export const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
};

export interface LeaseSpec {
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
 * Reads and writes go through the Lease's handle. The spec's timestamps are written here as strings,
 * because the API server requires MicroTime (six fractional digits) for `acquireTime`/`renewTime`,
 * which `Date#toISOString` (three digits) is not. `update` replaces (PUT) the last object read or written, with its `metadata.resourceVersion`, so the
 * API server answers 409 Conflict if anyone wrote in between. The spec is replaced as a whole (as
 * client-go does); labels and annotations on the Lease are kept.
 *
 * RBAC: `get`, `create`, `update` on `leases.coordination.k8s.io` in the namespace.
 */
export class LeaseLock implements ResourceLock {
  readonly #options: LeaseLockOptions;
  readonly #leases: Resource<LeaseObject>;
  #lease: LeaseObject | undefined;

  constructor(options: LeaseLockOptions) {
    if (options.identity === '') throw new TypeError('LeaseLock: identity must not be empty');
    this.#options = options;
    this.#leases = options.client.resource<LeaseObject>(LEASES);
  }

  identity(): string {
    return this.#options.identity;
  }

  describe(): string {
    return `${this.#options.namespace}/${this.#options.name}`;
  }

  async get(signal: AbortSignal): Promise<LeaderElectionRecord | undefined> {
    const { namespace, name } = this.#options;
    const lease = await this.#leases.getOptional({ namespace, name }, { signal });
    return lease === undefined ? undefined : this.#accept(lease, 'GET');
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    const lease: LeaseObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.#options.name, namespace: this.#options.namespace },
      spec: encodeLeaseSpec(record),
    };
    this.#accept(await this.#leases.create(lease, { signal }), 'POST');
  }

  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    if (this.#lease === undefined) {
      throw new Error(`Lease ${this.describe()} not read yet: call get or create before update`);
    }
    const lease: LeaseObject = { ...this.#lease, spec: encodeLeaseSpec(record) };
    this.#accept(await this.#leases.update(lease, { signal }), 'PUT');
  }

  /** Remembers the returned Lease as the base of the next update, returns its record. */
  #accept(lease: unknown, method: string): LeaderElectionRecord {
    if (typeof lease !== 'object' || lease === null) {
      throw new KubeApiError(`${method} Lease ${this.describe()}: the response is not an object`, {
        failure: KubeApiFailure.Decode,
        method,
      });
    }
    const object = lease as LeaseObject;
    const record = decodeLeaseSpec(object.spec ?? {}, this.describe(), method);
    this.#lease = object;
    return record;
  }
}

/** The spec client-go writes: every field present, an empty holder included (that is a release). */
export function encodeLeaseSpec(record: LeaderElectionRecord): LeaseSpec {
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
 * field of the wrong type is a `decode` failure of the request (`method`) that returned the Lease
 * (`lease`, for the message).
 */
export function decodeLeaseSpec(spec: LeaseSpec, lease: string, method: string): LeaderElectionRecord {
  const undecodable = (message: string, cause?: unknown): KubeApiError =>
    new KubeApiError(`Lease ${lease}: ${message}`, { failure: KubeApiFailure.Decode, cause, method });
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
