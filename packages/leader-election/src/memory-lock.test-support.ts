import type { LeaderElectionRecord, ResourceLock } from './resource-lock.ts';

/** What a {@link MemoryLock} operation does instead of succeeding. */
export type Fault = 'fail' | 'hang';
type Operation = 'get' | 'create' | 'update';

/** A 409 like the API server's, so tests can assert conflicts are handled like any other failure. */
class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/**
 * One lock object in memory (a Lease), shared by every candidate's {@link MemoryLock}. `version`
 * plays `metadata.resourceVersion`.
 */
export class MemoryLeaseStore {
  record: LeaderElectionRecord | undefined;
  version = 0;
  /** Every successful write, in order, with the writer's identity. */
  readonly writes: { by: string; record: LeaderElectionRecord }[] = [];

  /** A write by someone outside the test's electors, e.g. a Go candidate. */
  put(record: LeaderElectionRecord, by = 'external'): void {
    this.record = { ...record };
    this.version++;
    this.writes.push({ by, record: { ...record } });
  }

  /** A metadata-only write (say, a label added): the version moves, the record does not. */
  touch(): void {
    this.version++;
  }
}

/**
 * In-memory {@link ResourceLock} with the Lease lock's optimistic concurrency: `update` fails with
 * {@link ConflictError} unless the store is still at the version this lock last read or wrote.
 * `faults` makes operations fail or hang (until their signal aborts); `beforeOperation` lets a test
 * interleave other writes at an exact point.
 */
export class MemoryLock implements ResourceLock {
  readonly #store: MemoryLeaseStore;
  readonly #identity: string;
  #seenVersion: number | undefined;
  readonly faults: Partial<Record<Operation, Fault>> = {};
  readonly calls: Operation[] = [];
  beforeOperation: ((operation: Operation) => void) | undefined;

  constructor(store: MemoryLeaseStore, identity: string) {
    this.#store = store;
    this.#identity = identity;
  }

  identity(): string {
    return this.#identity;
  }

  describe(): string {
    return `memory/${this.#identity}`;
  }

  async get(signal: AbortSignal): Promise<LeaderElectionRecord | undefined> {
    await this.#enter('get', signal);
    this.#seenVersion = this.#store.version;
    return this.#store.record === undefined ? undefined : { ...this.#store.record };
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    await this.#enter('create', signal);
    if (this.#store.record !== undefined) throw new ConflictError('AlreadyExists');
    this.#store.put(record, this.#identity);
    this.#seenVersion = this.#store.version;
  }

  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    await this.#enter('update', signal);
    if (this.#store.record === undefined) throw new Error('NotFound');
    if (this.#seenVersion !== this.#store.version) throw new ConflictError('Conflict');
    this.#store.put(record, this.#identity);
    this.#seenVersion = this.#store.version;
  }

  async #enter(operation: Operation, signal: AbortSignal): Promise<void> {
    this.calls.push(operation);
    await Promise.resolve();
    this.beforeOperation?.(operation);
    const fault = this.faults[operation];
    if (fault === 'fail') throw new Error(`injected ${operation} failure`);
    if (fault === 'hang') {
      await new Promise<never>((_resolve, reject) => {
        const abort = (): void => {
          reject(signal.reason as Error);
        };
        if (signal.aborted) abort();
        else signal.addEventListener('abort', abort, { once: true });
      });
    }
    if (signal.aborted) throw signal.reason as Error;
  }
}
