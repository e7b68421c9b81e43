/**
 * A member's own `coordination.k8s.io/v1` Lease: one per replica, in the controller's namespace,
 * labelled with its ring. The spec is what client-go's LeaseLock writes (so `kubectl get leases` and any
 * Lease tooling read it as usual); the buckets it holds ride in the holdings annotation.
 *
 * Written here on a Lease handle rather than by extending `LeaseLock`: a member needs a label-selected
 * list of the whole ring, deletes with a resourceVersion precondition (its own on leave, others' after
 * long expiry), and the holdings annotation written in the same PUT as every renewal. `LeaseLock` is one
 * named Lease's get/create/update of the spec behind the elector's `ResourceLock`; growing it by three
 * operations and an annotation argument would not be small, and the elector needs none of it. What is
 * shared is reused: the record type and the MicroTime codec of `@loopwright/leader-election`.
 */
import type { KubeObject, WatchEvent } from '@loopwright/client';
import {
  decodeLeaseSpec,
  encodeLeaseSpec,
  type LeaderElectionRecord,
  type LeaseSpec,
} from '@loopwright/leader-election';
import { hashHex } from './hash.ts';
import { HOLDINGS_ANNOTATION } from './holdings.ts';

/** The label that puts a member Lease in its ring; its value is the ring's name. */
export const RING_LABEL = 'sharding.loopwright.dev/ring';

/** A Lease as the server returns it; written back whole, so fields this file does not know survive. */
export interface LeaseObject extends KubeObject {
  spec?: LeaseSpec;
}

/**
 * What a member needs of the Lease handle (`client.resource(LEASES)` fits): the unit tests give an
 * in-memory double with the server's concurrency rules instead.
 */
export interface LeaseApi {
  list(options: { namespace: string; labelSelector: string; signal: AbortSignal }): Promise<{
    items: LeaseObject[];
  }>;
  create(lease: LeaseObject, options: { signal: AbortSignal }): Promise<LeaseObject>;
  update(lease: LeaseObject, options: { signal: AbortSignal }): Promise<LeaseObject>;
  delete(
    key: { namespace: string; name: string },
    options: { preconditions: { resourceVersion: string }; signal: AbortSignal },
  ): Promise<boolean>;
  watch(options: {
    namespace: string;
    labelSelector: string;
    resourceVersion?: string;
    timeoutSeconds?: number;
    signal: AbortSignal;
  }): AsyncIterable<WatchEvent<LeaseObject>>;
}

/** One member Lease of the ring, decoded. */
export interface MemberLease {
  readonly name: string;
  readonly resourceVersion: string;
  readonly record: LeaderElectionRecord;
  /** The holdings annotation's raw text; `undefined` when the Lease has none. */
  readonly holdings: string | undefined;
  /** The object as read or written: the base of the next update. */
  readonly object: LeaseObject;
}

/** A DNS-1123 subdomain, what a Lease name must be. */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME = 253;
/** `-` and 16 hex digits. */
const SUFFIX_LENGTH = 17;

/**
 * `<ring>-<identity>` when that is a valid Lease name. Otherwise (a pod name is valid, but an identity
 * such as `host_uuid` or an uppercase one is not, and a long one may exceed 253 characters): lowercased,
 * every character other than `[a-z0-9-]` replaced by `-`, cut so that the whole fits in 253 characters,
 * dashes trimmed from its end, and followed by `-` and the FNV-1a 64 of the unsanitised text in hex.
 * The sanitising loses information (`A` and `a`, `_` and `.` map alike); the hash keeps two identities
 * from ever sharing a Lease. The ring name, a label value, starts with a letter or digit, so the result
 * does as well.
 */
export function memberLeaseName(ring: string, identity: string): string {
  const raw = `${ring}-${identity}`;
  if (raw.length <= MAX_NAME && SUBDOMAIN.test(raw)) return raw;
  const base = raw
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, MAX_NAME - SUFFIX_LENGTH)
    .replace(/-+$/, '');
  return `${base}-${hashHex(raw)}`;
}

/** The text that changes whenever the holder writes: its record and its holdings. */
export function memberContent(lease: MemberLease): string {
  const { holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions } = lease.record;
  return JSON.stringify([
    holderIdentity,
    leaseDurationSeconds,
    acquireTime ?? null,
    renewTime ?? null,
    leaseTransitions,
    lease.holdings ?? null,
  ]);
}

/**
 * The Leases of one ring: list, create, update, delete. Every failure rejects with the handle's
 * `KubeApiError` (`isConflict`, `isAlreadyExists`...); a Lease whose spec has a field of the wrong type
 * is a `decode` failure of the request that returned it.
 */
export class MemberLeases {
  readonly #api: LeaseApi;
  readonly #namespace: string;
  readonly #ring: string;

  constructor(api: LeaseApi, namespace: string, ring: string) {
    this.#api = api;
    this.#namespace = namespace;
    this.#ring = ring;
  }

  /**
   * Every Lease of the ring, in one list without a resourceVersion: a consistent read from etcd, never
   * a cache. The take's conflict check depends on it seeing every write that completed before it.
   */
  async list(signal: AbortSignal): Promise<MemberLease[]> {
    const page = await this.#api.list({
      namespace: this.#namespace,
      labelSelector: `${RING_LABEL}=${this.#ring}`,
      signal,
    });
    return page.items.map((item) => decodeMemberLease(item, 'GET'));
  }

  /**
   * The ring's changes as they happen, from `resourceVersion` (absent: the current Leases first, as
   * ADDED events). A hint only (see `RingWatch`): events may come late, twice, or out of step with lists.
   */
  watch(
    resourceVersion: string | undefined,
    timeoutSeconds: number,
    signal: AbortSignal,
  ): AsyncIterable<WatchEvent<LeaseObject>> {
    return this.#api.watch({
      namespace: this.#namespace,
      labelSelector: `${RING_LABEL}=${this.#ring}`,
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      timeoutSeconds,
      signal,
    });
  }

  async create(
    name: string,
    record: LeaderElectionRecord,
    holdings: string,
    signal: AbortSignal,
  ): Promise<MemberLease> {
    const lease: LeaseObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace: this.#namespace,
        labels: { [RING_LABEL]: this.#ring },
        annotations: { [HOLDINGS_ANNOTATION]: holdings },
      },
      spec: encodeLeaseSpec(record),
    };
    return decodeMemberLease(await this.#api.create(lease, { signal }), 'POST');
  }

  /**
   * Replaces `base`'s spec and holdings (PUT at `base`'s resourceVersion: 409 Conflict if anyone wrote
   * since), keeping its other metadata; the ring label is set again in case someone removed it.
   */
  async update(
    base: MemberLease,
    record: LeaderElectionRecord,
    holdings: string,
    signal: AbortSignal,
  ): Promise<MemberLease> {
    const metadata = base.object.metadata ?? {};
    const lease: LeaseObject = {
      ...base.object,
      metadata: {
        ...metadata,
        labels: { ...metadata.labels, [RING_LABEL]: this.#ring },
        annotations: { ...metadata.annotations, [HOLDINGS_ANNOTATION]: holdings },
      },
      spec: { ...base.object.spec, ...encodeLeaseSpec(record) },
    };
    return decodeMemberLease(await this.#api.update(lease, { signal }), 'PUT');
  }

  /** Deletes `lease` only if it is still at its resourceVersion; false when it was already gone. */
  delete(lease: MemberLease, signal: AbortSignal): Promise<boolean> {
    return this.#api.delete(
      { namespace: this.#namespace, name: lease.name },
      { preconditions: { resourceVersion: lease.resourceVersion }, signal },
    );
  }
}

/** Reads a Lease with client-go's defaults for absent spec fields, as `LeaseLock` does. */
export function decodeMemberLease(object: LeaseObject, method: string): MemberLease {
  const name = object.metadata?.name ?? '';
  return {
    name,
    resourceVersion: object.metadata?.resourceVersion ?? '',
    record: decodeLeaseSpec(object.spec ?? {}, name, method),
    holdings: object.metadata?.annotations?.[HOLDINGS_ANNOTATION],
    object,
  };
}
