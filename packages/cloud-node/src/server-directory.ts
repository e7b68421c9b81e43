/**
 * Where every server lookup of both controllers goes. It keeps one shared snapshot of all servers (one
 * paginated `GET /servers` sweep, 50 per page) plus short-lived answers of single lookups, and chooses
 * the cheapest way to answer a burst of lookups:
 *
 * - Lookups arriving within `gatherMs` of each other are batched. A batch that, together with the servers
 *   looked up singly within the age it accepts (they will be asked for again), reaches as many keys as a
 *   sweep has pages is answered by ONE sweep; a smaller one by one request per key (`GET /servers/{id}`,
 *   or `GET /servers?name=` for Nodes without a providerID). So one NotReady Node costs 1 request per
 *   period, 500 of them cost one 10-page sweep, never 1000 requests, even when their lookups trickle in
 *   one by one (a sweep after at most a page count of single lookups, then all read it).
 * - A sweep (single-flight) serves every lookup that accepts its age, e.g. all NotReady Nodes of one
 *   lifecycle period and the 5-minute address refresh of every Node.
 * - "Gone" is only ever concluded from `GET /servers/{id}` answering 404 `not_found`: a listing can skip a
 *   server (offset pagination while servers are deleted), so a listing miss is confirmed by id first.
 *   Confirmed gone ids are remembered (`goneTtlMs`; ids are never reused); other misses (a name not
 *   found) are remembered for `negativeTtlMs` only.
 * - Every API call is cleared with the {@link RequestBudget} first; when it says wait, lookups answer
 *   `unknown` with `retryAfterMs` instead of spending the budget (callers requeue). After a failed call
 *   (5xx, timeout, 401, 429...) lookups answer `unknown` for a growing back-off (1 s doubling to 1 min)
 *   instead of hammering an API that is down.
 */
import { Backoff, type BackoffOptions } from '@loopwright/core';
import { HcloudError, type HcloudClient, type Server } from '@loopwright/hcloud';
import type { Priority, RequestBudget } from './budget.ts';

export interface Snapshot {
  readonly byId: ReadonlyMap<number, Server>;
  readonly byName: ReadonlyMap<string, Server>;
  /** Unix ms when the sweep started (data is at least this fresh). */
  readonly takenAt: number;
}

/**
 * Why there is no answer now: `budget` = deliberately waiting for the rate limit to refill (routine);
 * `api-error` = the API failed (5xx, timeout, 401, 429...) and lookups back off.
 */
export type NotNowCause = 'budget' | 'api-error';

interface NotNow {
  retryAfterMs: number;
  reason: string;
  cause: NotNowCause;
}

export type SnapshotResult = { ok: true; snapshot: Snapshot } | ({ ok: false } & NotNow);

export type ServerRef = { id: number } | { name: string };

export type Lookup =
  | { state: 'exists'; server: Server; fetchedAt: number }
  /** For an id: the API answered 404 not_found. For a name: no server has it. */
  | { state: 'gone'; fetchedAt: number }
  | ({ state: 'unknown' } & NotNow);

export interface LookupOptions {
  /** Accept data this old (ms). `Infinity`: any snapshot that has the server will do. */
  maxAgeMs: number;
  priority: Priority;
  signal?: AbortSignal;
}

/** The part of {@link HcloudClient} the directory uses (tests may substitute it). */
export type ServerApi = Pick<HcloudClient, 'listServers' | 'getServer'>;

export interface ServerDirectoryOptions {
  client: ServerApi;
  budget: RequestBudget;
  now?: () => number;
  /** How long a batch collects lookups before it is sent. Default 20 ms. */
  gatherMs?: number;
  /** How long a name miss is believed. Default 30 s. */
  negativeTtlMs?: number;
  /** How long a confirmed-gone id is remembered. Default 10 min. */
  goneTtlMs?: number;
  /** Back-off after a failed call: first step and cap. Default 1 s and 60 s. */
  failureBackoff?: { initialMs: number; maxMs: number };
  /** Single lookups sent in parallel. Default 4. */
  pointConcurrency?: number;
  logger?: { debug(message: string, fields?: object): void; warn(message: string, fields?: object): void };
}

interface PointAnswer {
  server: Server | null;
  at: number;
}

interface Pending {
  ref: ServerRef;
  /** The freshest snapshot lacked it: only a single lookup can answer. */
  needsPoint: boolean;
  maxAgeMs: number;
  priority: Priority;
  resolve: (lookup: Lookup) => void;
}

const PER_PAGE = 50;

function waitForBudget(retryAfterMs: number): NotNow {
  return { retryAfterMs, reason: 'API budget: waiting for the rate limit to refill', cause: 'budget' };
}

/**
 * How often the remembered single answers are swept of those past every TTL that could still accept
 * them (a sweep walks them all, so not at every answer).
 */
const PRUNE_EVERY_MS = 60_000;

function keyOf(ref: ServerRef): string {
  return 'id' in ref ? `id:${ref.id}` : `name:${ref.name}`;
}

export class ServerDirectory {
  readonly #client: ServerApi;
  readonly #budget: RequestBudget;
  readonly #now: () => number;
  readonly #gatherMs: number;
  readonly #negativeTtlMs: number;
  readonly #goneTtlMs: number;
  readonly #backoffOptions: BackoffOptions;
  readonly #pointConcurrency: number;
  readonly #logger: ServerDirectoryOptions['logger'];
  #snapshot: Snapshot | undefined;
  #sweep: Promise<SnapshotResult> | undefined;
  readonly #points = new Map<string, PointAnswer>();
  readonly #gone = new Map<number, number>();
  #pending: Pending[] = [];
  #flushTimer: NodeJS.Timeout | undefined;
  #backoff: Backoff;
  #blockedUntil = 0;
  #lastError = '';
  #prunedAt: number;

  constructor(options: ServerDirectoryOptions) {
    this.#client = options.client;
    this.#budget = options.budget;
    this.#now = options.now ?? Date.now;
    this.#gatherMs = options.gatherMs ?? 20;
    this.#negativeTtlMs = options.negativeTtlMs ?? 30_000;
    this.#goneTtlMs = options.goneTtlMs ?? 600_000;
    this.#prunedAt = this.#now();
    const { initialMs, maxMs } = options.failureBackoff ?? { initialMs: 1000, maxMs: 60_000 };
    // min(): the first delay too stays within the cap, as min(maxMs, initialMs * 2^n) always did.
    this.#backoffOptions = {
      durationMs: Math.min(initialMs, maxMs),
      factor: 2,
      steps: Infinity,
      capMs: maxMs,
    };
    this.#backoff = new Backoff(this.#backoffOptions);
    this.#pointConcurrency = options.pointConcurrency ?? 4;
    this.#logger = options.logger;
  }

  /** The latest snapshot, whatever its age. */
  get current(): Snapshot | undefined {
    return this.#snapshot;
  }

  /** Pages one sweep costs, as the last sweep counted them (1 before the first). */
  get sweepCost(): number {
    return Math.max(1, Math.ceil((this.#snapshot?.byId.size ?? 0) / PER_PAGE));
  }

  /** A snapshot no older than `maxAgeMs`; sweeps (budget permitting) when the current one is older. */
  async snapshot(options: LookupOptions): Promise<SnapshotResult> {
    const current = this.#snapshot;
    if (current && this.#now() - current.takenAt < options.maxAgeMs) return { ok: true, snapshot: current };
    if (this.#sweep) return this.#sweep;
    const blocked = this.#blocked();
    if (blocked) return { ok: false, ...blocked };
    const delay = this.#budget.delayMs(options.priority, this.sweepCost);
    if (delay > 0) return { ok: false, ...waitForBudget(delay) };
    return this.#startSweep(options.priority);
  }

  /** The server named by `ref` as fresh as `maxAgeMs` asks (see the class comment for the cost). */
  lookup(ref: ServerRef, options: LookupOptions): Promise<Lookup> {
    const now = this.#now();
    if ('id' in ref) {
      const goneAt = this.#gone.get(ref.id);
      if (goneAt !== undefined && now - goneAt < this.#goneTtlMs)
        return Promise.resolve({ state: 'gone', fetchedAt: goneAt });
    }
    const snapshot = this.#snapshot;
    const snapshotFresh = snapshot !== undefined && now - snapshot.takenAt < options.maxAgeMs;
    const hit = snapshot && ('id' in ref ? snapshot.byId.get(ref.id) : snapshot.byName.get(ref.name));
    if (hit && snapshotFresh)
      return Promise.resolve({ state: 'exists', server: hit, fetchedAt: snapshot.takenAt });
    const point = this.#points.get(keyOf(ref));
    if (point) {
      const ttl = point.server ? options.maxAgeMs : Math.min(options.maxAgeMs, this.#negativeTtlMs);
      if (now - point.at < ttl)
        return Promise.resolve(
          point.server
            ? { state: 'exists', server: point.server, fetchedAt: point.at }
            : { state: 'gone', fetchedAt: point.at },
        );
    }
    const blocked = this.#blocked();
    if (blocked) return Promise.resolve({ state: 'unknown', ...blocked });
    return new Promise((resolve) => {
      this.#pending.push({
        ref,
        needsPoint: snapshotFresh,
        maxAgeMs: options.maxAgeMs,
        priority: options.priority,
        resolve,
      });
      if (this.#flushTimer === undefined)
        this.#flushTimer = setTimeout(() => {
          void this.#flush();
        }, this.#gatherMs);
    });
  }

  #blocked(): NotNow | undefined {
    const wait = this.#blockedUntil - this.#now();
    return wait > 0
      ? {
          retryAfterMs: wait,
          reason: `Hetzner Cloud API failing (${this.#lastError}); backing off`,
          cause: 'api-error',
        }
      : undefined;
  }

  #succeeded(): void {
    this.#backoff = new Backoff(this.#backoffOptions);
    this.#blockedUntil = 0;
  }

  #failed(error: unknown): string {
    const reason =
      error instanceof HcloudError ? `${error.status ?? '-'} ${error.code}: ${error.message}` : String(error);
    const step = this.#backoff.step();
    this.#blockedUntil = this.#now() + step;
    this.#lastError = reason;
    this.#logger?.warn('Hetzner Cloud API call failed; backing off', {
      ...(error instanceof HcloudError ? { statusCode: error.status, code: error.code } : {}),
      error: error instanceof Error ? error.message : String(error),
      retryAfterMs: step,
    });
    return reason;
  }

  #startSweep(priority: Priority): Promise<SnapshotResult> {
    this.#budget.spend(priority, this.sweepCost);
    const takenAt = this.#now();
    const sweep = (async (): Promise<SnapshotResult> => {
      try {
        const servers = await this.#client.listServers();
        const snapshot: Snapshot = {
          byId: new Map(servers.map((s) => [s.id, s])),
          byName: new Map(servers.map((s) => [s.name, s])),
          takenAt,
        };
        this.#snapshot = snapshot;
        this.#succeeded();
        this.#logger?.debug('server snapshot taken', { servers: servers.length, priority });
        return { ok: true, snapshot };
      } catch (error) {
        const reason = this.#failed(error);
        return {
          ok: false,
          retryAfterMs: Math.max(1, this.#blockedUntil - this.#now()),
          reason,
          cause: 'api-error',
        };
      } finally {
        this.#sweep = undefined;
      }
    })();
    this.#sweep = sweep;
    return sweep;
  }

  async #flush(): Promise<void> {
    this.#flushTimer = undefined;
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    const priority: Priority = batch.some((p) => p.priority === 'urgent') ? 'urgent' : 'refresh';

    // A sweep answers everything a listing can answer; below its page count, single lookups are cheaper.
    const sweepable = batch.filter((p) => !p.needsPoint);
    const useSweep =
      this.#sweep !== undefined ||
      (sweepable.length > 0 &&
        (this.#snapshot === undefined ||
          sweepable.length + this.#recentlyFound(sweepable) >= this.sweepCost));
    let rest = batch;
    if (useSweep) {
      const settled = await (this.#sweep ?? this.#guardedSweep(priority));
      if (!settled.ok) {
        const { retryAfterMs, reason, cause } = settled;
        for (const p of batch) p.resolve({ state: 'unknown', retryAfterMs, reason, cause });
        return;
      }
      rest = [];
      for (const p of batch) {
        const hit =
          'id' in p.ref ? settled.snapshot.byId.get(p.ref.id) : settled.snapshot.byName.get(p.ref.name);
        if (hit) p.resolve({ state: 'exists', server: hit, fetchedAt: settled.snapshot.takenAt });
        else rest.push(p); // an id must be confirmed; a name gets one direct query
      }
      if (rest.length === 0) return;
    }
    // Confirming what a (fresh) sweep missed completes that sweep's work: pacing it separately would
    // defer it past the snapshot's freshness again and again, and a gone server's Node would never go.
    const confirmsOnly = useSweep || rest.every((p) => p.needsPoint);
    const delay = this.#budget.delayMs(priority, rest.length, { unpaced: confirmsOnly });
    if (delay > 0) {
      for (const p of rest) p.resolve({ state: 'unknown', ...waitForBudget(delay) });
      return;
    }
    this.#budget.spend(priority, rest.length);
    await this.#pointLookups(rest);
  }

  /**
   * Servers found by single lookups within the age `batch` accepts: each is a Node that will ask again
   * within that age, so they and the batch are the demand one sweep would serve for as long.
   */
  #recentlyFound(batch: readonly Pending[]): number {
    const since = this.#now() - Math.min(...batch.map((p) => p.maxAgeMs));
    let found = 0;
    for (const answer of this.#points.values()) if (answer.server && answer.at > since) found++;
    return found;
  }

  /** A sweep if the budget allows it now; otherwise the reason to wait. */
  async #guardedSweep(priority: Priority): Promise<SnapshotResult> {
    const delay = this.#budget.delayMs(priority, this.sweepCost);
    if (delay > 0) return { ok: false, ...waitForBudget(delay) };
    return this.#startSweep(priority);
  }

  async #pointLookups(batch: Pending[]): Promise<void> {
    const byKey = new Map<string, Pending[]>();
    for (const p of batch) byKey.set(keyOf(p.ref), [...(byKey.get(keyOf(p.ref)) ?? []), p]);
    const keys = [...byKey.values()];
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < keys.length; i = next++) {
        const group = keys[i] ?? [];
        const ref = group[0]?.ref;
        if (ref === undefined) continue;
        const lookup = await this.#pointLookup(ref);
        for (const p of group) p.resolve(lookup);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#pointConcurrency, keys.length) }, worker));
  }

  async #pointLookup(ref: ServerRef): Promise<Lookup> {
    const blocked = this.#blocked();
    if (blocked) return { state: 'unknown', ...blocked };
    const at = this.#now();
    try {
      const server =
        'id' in ref
          ? await this.#client.getServer(ref.id)
          : ((await this.#client.listServers({ name: ref.name })).find((s) => s.name === ref.name) ?? null);
      this.#succeeded();
      this.#points.set(keyOf(ref), { server, at });
      if (!server && 'id' in ref) this.#gone.set(ref.id, at);
      this.#prune(at);
      return server ? { state: 'exists', server, fetchedAt: at } : { state: 'gone', fetchedAt: at };
    } catch (error) {
      const reason = this.#failed(error);
      return {
        state: 'unknown',
        reason,
        retryAfterMs: Math.max(1, this.#blockedUntil - this.#now()),
        cause: 'api-error',
      };
    }
  }

  /**
   * Keeps the caches bounded by what the TTLs can still use: once a minute, the answers past every TTL
   * that could still accept them are dropped, servers found included. (They were dropped only on a
   * gone answer with 1,000 kept: with Nodes replaced all the time and their servers found, every
   * server ever looked up stayed, heap growing for as long as the controller ran.)
   */
  #prune(now: number): void {
    if (now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    for (const [key, answer] of this.#points) if (now - answer.at > this.#goneTtlMs) this.#points.delete(key);
    for (const [id, at] of this.#gone) if (now - at > this.#goneTtlMs) this.#gone.delete(id);
  }

  /** How many single answers the directory remembers (for tests: they must not grow without bound). */
  remembered(): { points: number; gone: number } {
    return { points: this.#points.size, gone: this.#gone.size };
  }
}
