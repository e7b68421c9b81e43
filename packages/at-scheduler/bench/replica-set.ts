/**
 * The churn bench's sharded replicas, kept at a desired count as a Deployment's ReplicaSet keeps its
 * pods: scaled up by starting new ones, down by SIGTERMing the oldest, and a replica that exits by itself
 * (a replica that could not renew its member Lease in time exits 1, so that its pod restarts) replaced
 * by a new one. Every change is recorded with its time: the hand-off windows start there.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ShardedReplica, type ShardedReplicaSpec } from './sharded-replica.ts';

export interface Change {
  label: string;
  ms: number;
}

/** How often `hold` looks for replicas that exited by themselves. */
const WATCH_MS = 250;

export class ReplicaSet {
  readonly replicas: ShardedReplica[] = [];
  readonly changes: Change[] = [];
  readonly #spec: Omit<ShardedReplicaSpec, 'identity' | 'logPath'>;
  readonly #logDir: string;
  readonly #stopTimeoutMs: number;
  readonly #report: (change: Change) => void;
  readonly #replaced = new Set<ShardedReplica>();
  #desired = 0;
  #serial = 0;

  constructor(options: {
    spec: Omit<ShardedReplicaSpec, 'identity' | 'logPath'>;
    logDir: string;
    stopTimeoutMs: number;
    report: (change: Change) => void;
  }) {
    this.#spec = options.spec;
    this.#logDir = options.logDir;
    this.#stopTimeoutMs = options.stopTimeoutMs;
    this.#report = options.report;
  }

  running(): ShardedReplica[] {
    return this.replicas.filter((replica) => replica.running);
  }

  /** Starts or SIGTERMs (the oldest first, each drains and leaves) until `count` run. */
  async scaleTo(count: number, label: string): Promise<void> {
    this.#change(label, Date.now());
    this.#desired = count;
    const running = this.running();
    if (running.length > count)
      await Promise.all(running.slice(0, running.length - count).map((r) => r.stop(this.#stopTimeoutMs)));
    else await Promise.all(Array.from({ length: count - running.length }, () => this.#start()));
  }

  /** SIGKILLs the oldest running replica, and does not replace it (the desired count drops by one). */
  async killOldest(label: string): Promise<void> {
    const oldest = this.running()[0];
    if (oldest === undefined) throw new Error('no replica to kill');
    this.#change(`${label}: ${oldest.identity}`, Date.now());
    this.#desired--;
    await oldest.kill();
  }

  /** Waits `ms`, replacing any replica that exits by itself meanwhile. */
  async hold(ms: number): Promise<void> {
    const until = Date.now() + ms;
    for (;;) {
      await this.replaceExited();
      const left = until - Date.now();
      if (left <= 0) return;
      await sleep(Math.min(WATCH_MS, left));
    }
  }

  async replaceExited(): Promise<void> {
    for (const replica of this.replicas)
      if (replica.exitedByItself && !this.#replaced.has(replica)) {
        this.#replaced.add(replica);
        this.#change(`${replica.identity} exited by itself (${replica.exit})`, replica.exitMs ?? Date.now());
        if (this.running().length < this.#desired) await this.#start();
      }
  }

  /** SIGTERMs every replica still running. */
  async stopAll(): Promise<void> {
    this.#desired = 0;
    await Promise.all(this.running().map((replica) => replica.stop(this.#stopTimeoutMs)));
  }

  #change(label: string, ms: number): void {
    const change = { label, ms };
    this.changes.push(change);
    this.changes.sort((a, b) => a.ms - b.ms);
    this.#report(change);
  }

  async #start(): Promise<ShardedReplica> {
    // Named before the await: replicas started together get distinct names (and member Leases).
    const identity = `replica-${this.#serial++}`;
    const replica = await ShardedReplica.start({
      ...this.#spec,
      identity,
      logPath: join(this.#logDir, `${identity}.log`),
    });
    this.replicas.push(replica);
    return replica;
  }
}
