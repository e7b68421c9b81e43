/**
 * One sharded replica of the released program (the bundle of src/main.ts) as a Deployment's pod runs it:
 * configured by its environment only (kubeconfig, `SHARDING=true`, the ring, the member Lease
 * durations, its identity as the downward API gives `POD_NAME`), JSON logs at debug on stdout. Stdout
 * and stderr go straight to a file (the child writes it itself, so a SIGKILL loses no line the bench
 * would still have had to copy), which the churn bench reads at the end.
 */
import { spawn } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ShardedReplicaSpec {
  /** The bundle's entry module. */
  main: string;
  kubeconfigPath: string;
  /** Watched, and where the member Leases live. */
  namespace: string;
  ring: string;
  identity: string;
  logPath: string;
  /** Lease duration, renew deadline and retry period, as the leader-election variables take them; the program's defaults when absent. */
  lease?: { duration: string; renewDeadline: string; retryPeriod: string };
  /** `debug` (the default) logs each reconcile's start and end and each claim; `info` each start only. */
  logLevel?: 'debug' | 'info';
  /** More variables of the program (e.g. WORKERS). */
  extraEnv?: Readonly<Record<string, string>>;
}

export class ShardedReplica {
  readonly identity: string;
  readonly logPath: string;
  readonly #child: ReturnType<typeof spawn>;
  readonly #exited: Promise<number>;
  #exitMs: number | undefined;
  #exit = '';
  #killed = false;
  #signalled = false;

  private constructor(spec: ShardedReplicaSpec, child: ReturnType<typeof spawn>) {
    this.identity = spec.identity;
    this.logPath = spec.logPath;
    this.#child = child;
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exitMs = Date.now();
        this.#exit = signal ?? `code ${code}`;
        resolve(this.#exitMs);
      });
    });
  }

  static async start(spec: ShardedReplicaSpec): Promise<ShardedReplica> {
    const log = await open(spec.logPath, 'a');
    try {
      const child = spawn(process.execPath, [spec.main], {
        env: {
          PATH: process.env.PATH,
          KUBECONFIG: spec.kubeconfigPath,
          WATCH_NAMESPACE: spec.namespace,
          LEADER_ELECTION_NAMESPACE: spec.namespace,
          POD_NAME: spec.identity,
          SHARDING: 'true',
          SHARDING_RING: spec.ring,
          ...(spec.lease && {
            LEADER_ELECT_LEASE_DURATION: spec.lease.duration,
            LEADER_ELECT_RENEW_DEADLINE: spec.lease.renewDeadline,
            LEADER_ELECT_RETRY_PERIOD: spec.lease.retryPeriod,
          }),
          // Free ports: several replicas on one host.
          HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
          METRICS_BIND_ADDRESS: '127.0.0.1:0',
          LOG_FORMAT: 'json',
          // 'reconciling'/'reconciled' and the claims are debug lines.
          LOG_LEVEL: spec.logLevel ?? 'debug',
          ...spec.extraEnv,
        },
        stdio: ['ignore', log.fd, log.fd],
      });
      if (child.pid === undefined) throw new Error(`${spec.identity} did not start`);
      return new ShardedReplica(spec, child);
    } finally {
      // The child holds its own copy of the descriptor.
      await log.close();
    }
  }

  /** The process id, for what only /proc tells (its resident memory). */
  get pid(): number {
    return this.#child.pid ?? Number.NaN;
  }

  get running(): boolean {
    return this.#exitMs === undefined;
  }

  get killed(): boolean {
    return this.#killed;
  }

  /** It exited without being told to (e.g. it lost its member Lease: exit 1, for its pod to restart). */
  get exitedByItself(): boolean {
    return !this.running && !this.#signalled;
  }

  /** How it exited (`code 1`, `SIGKILL`...); empty while it runs. */
  get exit(): string {
    return this.#exit;
  }

  /** Epoch ms when its exit was seen; undefined while it runs. */
  get exitMs(): number | undefined {
    return this.#exitMs;
  }

  async log(): Promise<string> {
    return readFile(this.logPath, 'utf8');
  }

  /** Resolves once its log holds a JSON line with this message; rejects after `timeoutMs` or its exit. */
  async logged(message: string, timeoutMs: number): Promise<void> {
    const needle = `"message":${JSON.stringify(message)}`;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if ((await this.log()).includes(needle)) return;
      if (!this.running) throw new Error(`${this.identity} exited before logging '${message}'`);
      if (Date.now() > deadline)
        throw new Error(`${this.identity} did not log '${message}' in ${timeoutMs} ms`);
      await sleep(200);
    }
  }

  /** SIGTERM, as a rolling update or a scale-down: it drains its buckets, deletes its Lease and exits. */
  async stop(timeoutMs: number): Promise<number> {
    this.#signalled = true;
    this.#child.kill('SIGTERM');
    const cancel = new AbortController();
    const exitMs = await Promise.race([
      this.#exited,
      sleep(timeoutMs, undefined, { signal: cancel.signal }).catch(() => undefined),
    ]);
    cancel.abort();
    if (exitMs === undefined)
      throw new Error(`${this.identity} did not exit within ${timeoutMs} ms of SIGTERM`);
    return exitMs;
  }

  /** SIGKILL, as a node's loss: no drain, no release; its Lease expires. Resolves with the exit time. */
  async kill(): Promise<number> {
    this.#killed = true;
    this.#signalled = true;
    this.#child.kill('SIGKILL');
    return this.#exited;
  }
}
