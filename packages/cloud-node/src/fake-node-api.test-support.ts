/**
 * An in-memory, recording {@link NodeApi} for the reconcilers' unit tests: every call lands in `calls`
 * (in order), server look-ups answer what the test set, and the Kubernetes writes can be made to fail
 * with a 409 Conflict the way the API server answers a stale resourceVersion.
 */
import type { Server } from '@loopwright/hcloud';
import {
  KubeApiError,
  createLogger,
  createSilentLogger,
  type EventInput,
  type ReconcileRequest,
  type StatusWriter,
} from '@loopwright/runtime';
import { Writable } from 'node:stream';
import type { Logger } from 'winston';
import type { NodeApi } from './api.ts';
import type { Node } from './node.ts';
import type { Lookup, LookupOptions, ServerRef, SnapshotResult } from './server-directory.ts';

type Options = Omit<LookupOptions, 'signal'>;

export type Call =
  | { call: 'getNode'; name: string }
  | { call: 'patchNode'; name: string; patch: Record<string, unknown>; resourceVersion: string | undefined }
  | { call: 'patchNodeStatus'; name: string; patch: Record<string, unknown> }
  | { call: 'deleteNode'; name: string; preconditions: { uid?: string; resourceVersion?: string } }
  | { call: 'recordEvent'; name: string; event: EventInput }
  | { call: 'lookupServer'; ref: ServerRef; options: Options }
  | { call: 'serverSnapshot'; options: Options };

export const conflict = (): KubeApiError =>
  new KubeApiError('Operation cannot be fulfilled on nodes: the object has been modified', {
    status: 409,
    reason: 'Conflict',
  });

export class FakeNodeApi implements NodeApi {
  readonly calls: Call[] = [];
  /** What `lookupServer` answers. */
  lookup: Lookup = { state: 'unknown', retryAfterMs: 1, reason: 'no answer set', cause: 'budget' };
  /** What `serverSnapshot` answers. */
  snapshot: SnapshotResult = { ok: false, retryAfterMs: 1, reason: 'no answer set', cause: 'budget' };
  /** What `sweepPages` answers: a project of at most 50 servers unless a test says otherwise. */
  pages = 1;
  /** What `getNode` reads (the API server's current Node, e.g. after another writer's change). */
  readonly live = new Map<string, Node>();
  /** Errors the next `patchNode` calls throw, first one first. */
  readonly patchErrors: Error[] = [];
  /** Errors the next `deleteNode` calls throw, first one first. */
  readonly deleteErrors: Error[] = [];

  /** The calls of one kind, in order. */
  callsOf<K extends Call['call']>(kind: K): Extract<Call, { call: K }>[] {
    return this.calls.filter((c): c is Extract<Call, { call: K }> => c.call === kind);
  }

  /** The writes (patches, deletes, Events): what a user would see change. */
  writes(): Call[] {
    return this.calls.filter(
      (c) => c.call !== 'getNode' && c.call !== 'lookupServer' && c.call !== 'serverSnapshot',
    );
  }

  getNode(name: string): Promise<Node> {
    this.calls.push({ call: 'getNode', name });
    const node = this.live.get(name);
    return node
      ? Promise.resolve(structuredClone(node))
      : Promise.reject(new KubeApiError(`nodes "${name}" not found`, { status: 404, reason: 'NotFound' }));
  }

  patchNode(
    name: string,
    patch: Record<string, unknown>,
    resourceVersion: string | undefined,
  ): Promise<Node> {
    this.calls.push({ call: 'patchNode', name, patch, resourceVersion });
    const error = this.patchErrors.shift();
    if (error !== undefined) return Promise.reject(error);
    return Promise.resolve({ metadata: { name } });
  }

  patchNodeStatus(name: string, patch: Record<string, unknown>): Promise<Node> {
    this.calls.push({ call: 'patchNodeStatus', name, patch });
    return Promise.resolve({ metadata: { name } });
  }

  deleteNode(name: string, preconditions: { uid?: string; resourceVersion?: string }): Promise<boolean> {
    this.calls.push({ call: 'deleteNode', name, preconditions });
    const error = this.deleteErrors.shift();
    return error === undefined ? Promise.resolve(true) : Promise.reject(error);
  }

  recordEvent(node: Node, event: EventInput): void {
    this.calls.push({ call: 'recordEvent', name: node.metadata?.name ?? '', event });
  }

  lookupServer(ref: ServerRef, { maxAgeMs, priority }: LookupOptions): Promise<Lookup> {
    this.calls.push({ call: 'lookupServer', ref, options: { maxAgeMs, priority } });
    return Promise.resolve(this.lookup);
  }

  serverSnapshot({ maxAgeMs, priority }: LookupOptions): Promise<SnapshotResult> {
    this.calls.push({ call: 'serverSnapshot', options: { maxAgeMs, priority } });
    return Promise.resolve(this.snapshot);
  }

  /** Not a call to any API (the directory's own count), so not recorded. */
  sweepPages(): number {
    return this.pages;
  }
}

/** The controllers write `nodes/status` through the {@link NodeApi}: a write through the request is a bug. */
const noStatusWrites: StatusWriter<Node> = {
  patch: () => Promise.reject(new Error('the Node controllers write nodes/status through NodeApi')),
};

/** A reconcile request for `node` (or for a deleted Node named `name`), logging nowhere unless to `log`. */
export function request(
  node: Node | undefined,
  name = node?.metadata?.name ?? 'n',
  log: Logger = createSilentLogger(),
): ReconcileRequest<Node> {
  return {
    key: name,
    namespace: undefined,
    name,
    object: node,
    status: noStatusWrites,
    reconcileID: 'test',
    log,
    signal: new AbortController().signal,
  };
}

/** A JSON logger at level debug whose entries (without their timestamp) `lines()` returns. */
export function capturingLogger(): { log: Logger; lines: () => Promise<Record<string, unknown>[]> } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim() !== '') {
          const entry = JSON.parse(line) as Record<string, unknown>;
          delete entry.timestamp;
          lines.push(entry);
        }
      callback();
    },
  });
  return {
    log: createLogger({ stream, format: 'json', level: 'debug' }),
    // winston hands entries to its transport asynchronously
    lines: () =>
      new Promise((resolve) => {
        setImmediate(() => {
          resolve(lines);
        });
      }),
  };
}

/** A server as the API returns it (fields the mapping reads), id 42. */
export function server(overrides: Partial<Server> = {}): Server {
  return {
    id: 42,
    name: 'worker-1',
    status: 'running',
    created: null,
    server_type: { name: 'cx22' },
    location: {
      id: 1,
      name: 'nbg1',
      description: null,
      country: null,
      city: null,
      network_zone: 'eu-central',
    },
    public_net: { ipv4: { ip: '5.75.1.2' }, ipv6: { ip: '2a01:4f8:c0c:1::/64' } },
    private_net: [{ network: 7, ip: '10.0.0.5', alias_ips: [], mac_address: null }],
    labels: {},
    ...overrides,
  };
}
