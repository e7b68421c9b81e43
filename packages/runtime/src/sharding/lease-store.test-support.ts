import type { KubeClient, WatchEvent } from '@loopwright/client';
import { KubeApiError } from '@loopwright/client';
import type { LeaseApi, LeaseObject } from './member-lease.ts';

type Operation = 'list' | 'create' | 'update' | 'delete' | 'watch';
/**
 * What an operation does instead of succeeding: fail at once, be refused by RBAC (403 Forbidden), or
 * hang until its signal aborts.
 */
export type Fault = 'fail' | 'forbid' | 'hang';

function apiError(status: number, reason: string, message: string): KubeApiError {
  return new KubeApiError(`${message}: ${reason} (${status})`, { status, reason });
}

const copy = (lease: LeaseObject): LeaseObject => structuredClone(lease);

/** What the store's watchers get: its writes. */
type LeaseEvent = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: LeaseObject };

/**
 * Leases in memory with the API server's rules that members depend on: a resourceVersion per write
 * from one counter, 409 AlreadyExists on a create of an existing name, 409 Conflict on an update or a
 * delete precondition at another version, 404 on an update of what is gone, a list selected by label
 * (`key=value` only) that sees every write that completed before it, and watches that deliver every
 * later write at once (from now only: the double does not replay from a resourceVersion).
 */
export class MemoryLeaseStore {
  readonly #leases = new Map<string, LeaseObject>();
  #version = 0;
  /** Every successful write, in order: who, what, the Lease's name and its holdings annotation. */
  readonly writes: { by: string; operation: Operation; name: string; atMs: number }[] = [];
  /** Time for `writes` (the test's FakeClock). */
  now: () => number = () => 0;
  readonly #watchers = new Set<(event: LeaseEvent) => void>();

  /** A member's access, with faults of its own. */
  api(by: string): MemoryLeaseApi {
    return new MemoryLeaseApi(this, by);
  }

  /** The Lease of that name, a copy. */
  get(name: string): LeaseObject | undefined {
    const lease = this.#leases.get(name);
    return lease === undefined ? undefined : copy(lease);
  }

  names(): string[] {
    return [...this.#leases.keys()].sort();
  }

  list(labelSelector: string): LeaseObject[] {
    const match = /^([^=]+)=([^=]*)$/.exec(labelSelector);
    if (match === null) throw new Error(`the double selects by key=value only, got ${labelSelector}`);
    const [, key = '', value] = match;
    return [...this.#leases.values()].filter((lease) => lease.metadata?.labels?.[key] === value).map(copy);
  }

  create(lease: LeaseObject, by: string): LeaseObject {
    const name = lease.metadata?.name ?? '';
    if (this.#leases.has(name)) throw apiError(409, 'AlreadyExists', `create ${name}`);
    return this.#put(name, lease, by, 'create');
  }

  update(lease: LeaseObject, by: string): LeaseObject {
    const name = lease.metadata?.name ?? '';
    const current = this.#leases.get(name);
    if (current === undefined) throw apiError(404, 'NotFound', `update ${name}`);
    if (current.metadata?.resourceVersion !== lease.metadata?.resourceVersion) {
      throw apiError(409, 'Conflict', `update ${name}`);
    }
    return this.#put(name, lease, by, 'update');
  }

  delete(name: string, resourceVersion: string, by: string): boolean {
    const current = this.#leases.get(name);
    if (current === undefined) return false;
    if (current.metadata?.resourceVersion !== resourceVersion)
      throw apiError(409, 'Conflict', `delete ${name}`);
    this.#leases.delete(name);
    this.writes.push({ by, operation: 'delete', name, atMs: this.now() });
    this.#notify({ type: 'DELETED', object: copy(current) });
    return true;
  }

  /** Calls `watcher` with every later write, until the returned function is called. */
  subscribe(watcher: (event: LeaseEvent) => void): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  #notify(event: LeaseEvent): void {
    for (const watcher of this.#watchers) watcher(structuredClone(event));
  }

  #put(name: string, lease: LeaseObject, by: string, operation: Operation): LeaseObject {
    const stored = copy(lease);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#version) };
    this.#leases.set(name, stored);
    this.writes.push({ by, operation, name, atMs: this.now() });
    this.#notify({ type: operation === 'create' ? 'ADDED' : 'MODIFIED', object: copy(stored) });
    return copy(stored);
  }
}

/** One member's {@link LeaseApi} on a {@link MemoryLeaseStore}. */
export class MemoryLeaseApi implements LeaseApi {
  readonly #store: MemoryLeaseStore;
  readonly #by: string;
  readonly faults: Partial<Record<Operation, Fault>> = {};
  /** Runs before each operation takes effect: a test's write lands just before, say, a read. */
  beforeOperation: ((operation: Operation) => void) | undefined;
  /** While set, watches deliver no events (a watch that is down or late). */
  dropWatchEvents = false;
  #staleItems: LeaseObject[] | undefined;

  constructor(store: MemoryLeaseStore, by: string) {
    this.#store = store;
    this.#by = by;
  }

  /** A delayed view: the next list answers `items` (an earlier list's), once. */
  serveStaleListOnce(items: LeaseObject[]): void {
    this.#staleItems = items.map(copy);
  }

  /** A client whose `resource()` is this API, for `SharderOptions.client`. */
  client(): KubeClient {
    return { resource: () => this } as unknown as KubeClient;
  }

  async list(options: { labelSelector: string; signal: AbortSignal }): Promise<{ items: LeaseObject[] }> {
    await this.#enter('list', options.signal);
    const stale = this.#staleItems;
    this.#staleItems = undefined;
    return { items: stale ?? this.#store.list(options.labelSelector) };
  }

  async create(lease: LeaseObject, options: { signal: AbortSignal }): Promise<LeaseObject> {
    await this.#enter('create', options.signal);
    return this.#store.create(lease, this.#by);
  }

  async update(lease: LeaseObject, options: { signal: AbortSignal }): Promise<LeaseObject> {
    await this.#enter('update', options.signal);
    return this.#store.update(lease, this.#by);
  }

  async delete(
    key: { name: string },
    options: { preconditions: { resourceVersion: string }; signal: AbortSignal },
  ): Promise<boolean> {
    await this.#enter('delete', options.signal);
    return this.#store.delete(key.name, options.preconditions.resourceVersion, this.#by);
  }

  /**
   * The store's writes as events, selected by label, from now on; a `watch` fault fails or hangs its
   * start (a hanging watch delivers nothing, as a stuck connection). `dropWatchEvents` makes every
   * started watch deliver nothing while set.
   */
  async *watch(options: {
    labelSelector: string;
    signal: AbortSignal;
  }): AsyncGenerator<WatchEvent<LeaseObject>, void, undefined> {
    const [key = '', value] = options.labelSelector.split('=');
    const queue: LeaseEvent[] = [];
    let wake: (() => void) | undefined;
    const unsubscribe = this.#store.subscribe((event) => {
      if (this.dropWatchEvents || event.object.metadata?.labels?.[key] !== value) return;
      queue.push(event);
      wake?.();
    });
    const abort = (): void => wake?.();
    options.signal.addEventListener('abort', abort);
    try {
      await this.#enter('watch', options.signal);
      while (!options.signal.aborted) {
        const event = queue.shift();
        if (event !== undefined) {
          yield event;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      unsubscribe();
      options.signal.removeEventListener('abort', abort);
    }
  }

  async #enter(operation: Operation, signal: AbortSignal): Promise<void> {
    await Promise.resolve();
    if (signal.aborted) throw signal.reason as Error;
    this.beforeOperation?.(operation);
    const fault = this.faults[operation];
    if (fault === 'fail') throw new KubeApiError(`injected ${operation} failure`);
    if (fault === 'forbid') throw apiError(403, 'Forbidden', `${operation} leases`);
    if (fault === 'hang') {
      await new Promise<never>((_resolve, reject) => {
        const abort = (): void => {
          reject(signal.reason as Error);
        };
        if (signal.aborted) abort();
        else signal.addEventListener('abort', abort, { once: true });
      });
    }
  }
}
