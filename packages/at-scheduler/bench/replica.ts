/**
 * One replica of the released program (the bundle of src/main.ts) as a Deployment's pod runs it: its
 * configuration in the environment, leader election on, JSON logs on stdout. The failover bench reads
 * what it needs from the outside, as an operator would: the log for its ports and the moment it leads,
 * /metrics for its reconciles and heap, /proc for its resident memory.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

export type StandbyMode = 'warm' | 'cold';

export interface ReplicaSpec {
  /** The bundle's entry module. */
  main: string;
  kubeconfigPath: string;
  namespace: string;
  identity: string;
  mode: StandbyMode;
  /** Command-line flags after the environment, e.g. the Lease timings. */
  args: readonly string[];
}

export class Replica {
  readonly identity: string;
  readonly mode: StandbyMode;
  readonly #pid: number;
  readonly #kill: () => void;
  readonly #exited: Promise<void>;
  readonly #ports: Promise<{ probes: number; metrics: number }>;
  #stderr = '';
  #leadingAt: number | undefined;

  constructor(spec: ReplicaSpec) {
    this.identity = spec.identity;
    this.mode = spec.mode;
    const child = spawn(process.execPath, [spec.main, ...spec.args], {
      env: {
        PATH: process.env.PATH,
        KUBECONFIG: spec.kubeconfigPath,
        WATCH_NAMESPACE: spec.namespace,
        LEADER_ELECTION_NAMESPACE: spec.namespace,
        POD_NAME: spec.identity,
        WARM_STANDBY: String(spec.mode === 'warm'),
        // One free port for both: /metrics, /healthz and /readyz on one server.
        HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
        METRICS_BIND_ADDRESS: '127.0.0.1:0',
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid === undefined) throw new Error(`${spec.identity} did not start`);
    this.#pid = child.pid;
    this.#kill = () => child.kill('SIGKILL');
    this.#exited = new Promise((resolve) => {
      child.once('exit', () => {
        resolve();
      });
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr += chunk.toString('utf8');
    });
    const ports = { probes: 0, metrics: 0 };
    this.#ports = new Promise((resolve, reject) => {
      void this.#exited.then(() => {
        reject(new Error(`${spec.identity} exited before serving: ${this.#stderr}`));
      });
      createInterface({ input: child.stdout }).on('line', (text) => {
        if (process.env.AT_FAILOVER_DEBUG) process.stderr.write(`${spec.identity}: ${text}\n`);
        let line: { message?: string; port?: number };
        try {
          line = JSON.parse(text) as typeof line;
        } catch {
          return;
        }
        if (line.message === 'started leading') this.#leadingAt = performance.now();
        // 'serving /metrics, /healthz and /readyz' when both are on one address, as here.
        if (line.message?.startsWith('serving ') === true) {
          if (line.message.includes('/readyz')) ports.probes = line.port ?? 0;
          if (line.message.includes('/metrics')) ports.metrics = line.port ?? 0;
        }
        if (ports.probes > 0 && ports.metrics > 0) resolve(ports);
      });
    });
  }

  /** `performance.now()` when its 'started leading' line arrived; undefined while it has not led. */
  leadingAt(): number | undefined {
    return this.#leadingAt;
  }

  async ready(): Promise<boolean> {
    const { probes } = await this.#ports;
    return (await fetch(`http://127.0.0.1:${probes}/readyz`)).status === 200;
  }

  /** Its /metrics, parsed: the sum of each family's samples, by name. */
  async metrics(): Promise<Map<string, number>> {
    const { metrics } = await this.#ports;
    const text = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
    const sums = new Map<string, number>();
    for (const line of text.split('\n')) {
      if (line.startsWith('#') || line === '') continue;
      const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? '';
      sums.set(name, (sums.get(name) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
    return sums;
  }

  /** `controller_runtime_reconcile_total`, every controller and result. */
  async reconciles(): Promise<number> {
    return (await this.metrics()).get('controller_runtime_reconcile_total') ?? 0;
  }

  /** Resident set size in bytes, from /proc (the kernel's figure, not the process's own). */
  async rssBytes(): Promise<number> {
    const status = await readFile(`/proc/${this.#pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN) * 1024;
  }

  /** SIGKILL, as a node's loss or an OOM kill: no release of the Lease, no goodbye. */
  async kill(): Promise<void> {
    this.#kill();
    await this.#exited;
  }
}
