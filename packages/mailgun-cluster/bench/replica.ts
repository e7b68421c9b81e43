/**
 * One replica of the released program (the bundle of src/main.ts) as a Deployment's pod runs it: its
 * configuration in the environment only, as the chart writes it (the API key from a mounted file,
 * `POD_NAME`/`POD_NAMESPACE` as the downward API gives them, `SHARDING=true` and the ring), every other
 * option at its default (one worker, the 30 s Mailgun timeout, the 15 s/10 s/2 s Lease timings the
 * member Leases reuse). Its JSON log goes to a file of its own; the bench reads only its /metrics.
 */
import { spawn } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { freeLoopbackPort } from '@loopwright/envtest';

export interface ReplicaSpec {
  /** The bundle's entry module. */
  main: string;
  kubeconfigPath: string;
  /** Watched, and where the member Leases live (the pod's namespace). */
  namespace: string;
  ring: string;
  identity: string;
  mailgunUrl: string;
  mailgunDomain: string;
  apiKeyFile: string;
  recipient: string;
  logPath: string;
}

export class Replica {
  readonly identity: string;
  readonly logPath: string;
  readonly #child: ReturnType<typeof spawn>;
  readonly #metricsPort: number;
  readonly #exited: Promise<void>;
  #running = true;

  private constructor(spec: ReplicaSpec, child: ReturnType<typeof spawn>, metricsPort: number) {
    this.identity = spec.identity;
    this.logPath = spec.logPath;
    this.#child = child;
    this.#metricsPort = metricsPort;
    this.#exited = new Promise((resolve) => {
      child.once('exit', () => {
        this.#running = false;
        resolve();
      });
    });
  }

  static async start(spec: ReplicaSpec): Promise<Replica> {
    const metricsPort = await freeLoopbackPort();
    const probesPort = await freeLoopbackPort();
    const log = await open(spec.logPath, 'a');
    try {
      const child = spawn(process.execPath, [spec.main], {
        env: {
          PATH: process.env.PATH,
          KUBECONFIG: spec.kubeconfigPath,
          POD_NAME: spec.identity,
          POD_NAMESPACE: spec.namespace,
          WATCH_NAMESPACE: spec.namespace,
          SHARDING: 'true',
          SHARDING_RING: spec.ring,
          MAILGUN_DOMAIN: spec.mailgunDomain,
          MAILGUN_URL: spec.mailgunUrl,
          MAILGUN_API_KEY_FILE: spec.apiKeyFile,
          MAIL_RECIPIENT: spec.recipient,
          // Several replicas on one host: ports of their own on the loopback.
          METRICS_BIND_ADDRESS: `127.0.0.1:${metricsPort}`,
          HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${probesPort}`,
          LOG_FORMAT: 'json',
        },
        stdio: ['ignore', log.fd, log.fd],
      });
      if (child.pid === undefined) throw new Error(`${spec.identity} did not start`);
      return new Replica(spec, child, metricsPort);
    } finally {
      // The child holds its own copy of the descriptor.
      await log.close();
    }
  }

  get running(): boolean {
    return this.#running;
  }

  /** Its /metrics, scraped once. */
  async metrics(): Promise<Scrape> {
    return new Scrape(await (await fetch(`http://127.0.0.1:${this.#metricsPort}/metrics`)).text());
  }

  async logTail(lines: number): Promise<string> {
    return (await readFile(this.logPath, 'utf8')).split('\n').slice(-lines).join('\n');
  }

  /** SIGTERM, as a scale-down: it drains its buckets and deletes its member Lease; SIGKILL after `timeoutMs`. */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.#running) return;
    this.#child.kill('SIGTERM');
    const cancel = new AbortController();
    await Promise.race([
      this.#exited,
      sleep(timeoutMs, undefined, { signal: cancel.signal }).catch(() => undefined),
    ]);
    cancel.abort();
    // The getter, not the field: the check above narrowed the field, which the awaits changed.
    if (this.running) {
      this.#child.kill('SIGKILL');
      await this.#exited;
    }
  }
}

/** One /metrics page in Prometheus' text format. */
export class Scrape {
  readonly #samples: { name: string; labels: string; value: number }[] = [];

  constructor(text: string) {
    for (const line of text.split('\n')) {
      if (line.startsWith('#') || line === '') continue;
      const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? '';
      const labels = line.slice(name.length, line.lastIndexOf(' '));
      this.#samples.push({ name, labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
    }
  }

  /** The sum of a family's samples whose labels include `label` (e.g. `verb="PATCH"`), or of all of them. */
  sum(name: string, label?: string): number {
    return this.#samples
      .filter((sample) => sample.name === name && (label === undefined || sample.labels.includes(label)))
      .reduce((total, sample) => total + sample.value, 0);
  }
}
