/**
 * The controllers, each its own process started from source exactly as `pnpm nx serve` starts it,
 * configured only through its documented environment variables, logging to a file of its own so that
 * the table stays readable.
 */
import { freeLoopbackPort } from '@loopwright/envtest';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAIL_RECIPIENT, MAILGUN_DOMAIN, NAMESPACE, NODE_LABEL } from './names.ts';
import { repoRoot } from './repo.ts';
import { CONTROLLERS } from './workspace.ts';

const exitWithParent = new URL('exit-with-parent.ts', import.meta.url).href;

export interface ControllerSpec {
  name: string;
  /** The controller's own variables (the demo adds KUBECONFIG, the server address, LOG_FORMAT, PATH, HOME). */
  env: Record<string, string>;
}

export interface ThirdParties {
  hcloud: { url: string; token: string };
  mailgun: { url: string; apiKey: string };
}

/**
 * The demo's configuration of each controller. One replica each, so no leader election (no Lease to
 * create or clean up); each namespaced one watches only the demo's namespace, and cloud-node only the
 * demo's Node. A controller without an entry below needs nothing else (at-scheduler among them).
 */
export function controllerSpecs({ hcloud, mailgun }: ThirdParties): ControllerSpec[] {
  const [[labelKey, labelValue]] = Object.entries(NODE_LABEL) as [[string, string]];
  const own: Readonly<Record<string, Record<string, string>>> = {
    'mailgun-cluster': {
      MAILGUN_DOMAIN,
      MAILGUN_API_KEY: mailgun.apiKey,
      MAILGUN_URL: mailgun.url,
      MAIL_RECIPIENT,
    },
    'cloud-node': {
      HCLOUD_TOKEN: hcloud.token,
      HCLOUD_ENDPOINT: hcloud.url,
      NODE_SELECTOR: `${labelKey}=${labelValue}`,
    },
  };
  return CONTROLLERS.map(({ name, namespaced }) => ({
    name,
    env: {
      ...own[name],
      ...(namespaced ? { WATCH_NAMESPACE: NAMESPACE } : {}),
      LEADER_ELECT: 'false',
    },
  }));
}

export class ControllerProcess {
  readonly name: string;
  readonly logPath: string;
  /** Where it serves /metrics, /healthz and /readyz: one server, on loopback. */
  readonly port: number;
  /** Resolves with the exit code (null: killed by a signal) once the process is gone. */
  readonly exited: Promise<number | null>;
  readonly #child: ChildProcess;
  #gone = false;

  private constructor(spec: ControllerSpec, logPath: string, port: number, kubeconfig: string) {
    this.name = spec.name;
    this.logPath = logPath;
    this.port = port;
    const log = openSync(logPath, 'a');
    try {
      this.#child = spawn(
        process.execPath,
        [
          '--conditions=development',
          '--import',
          exitWithParent,
          join(repoRoot, 'packages', spec.name, 'src', 'main.ts'),
        ],
        {
          cwd: repoRoot,
          // Exactly this env: nothing from the user's shell (a stray WORKERS, WATCH_NAMESPACE...).
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            HOME: process.env.HOME ?? '/tmp',
            KUBECONFIG: kubeconfig,
            HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${port}`,
            METRICS_BIND_ADDRESS: `127.0.0.1:${port}`,
            LOG_FORMAT: 'console',
            ...spec.env,
          },
          stdio: ['ignore', log, log],
          // Out of the terminal's process group: Ctrl-C reaches the demo only, which stops the
          // controllers before the API server (see exit-with-parent.ts for when the demo dies).
          detached: true,
        },
      );
    } finally {
      closeSync(log);
    }
    this.exited = new Promise((resolve) => {
      this.#child.once('exit', (code) => {
        this.#gone = true;
        resolve(code);
      });
      this.#child.once('error', () => {
        this.#gone = true;
        resolve(-1);
      });
    });
  }

  static async start(spec: ControllerSpec, logDir: string, kubeconfig: string): Promise<ControllerProcess> {
    return new ControllerProcess(
      spec,
      join(logDir, `${spec.name}.log`),
      await freeLoopbackPort(),
      kubeconfig,
    );
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return !this.#gone;
  }

  /** The last lines of its log, to explain a failure. */
  async tail(lines = 15): Promise<string> {
    const text = await readFile(this.logPath, 'utf8').catch(() => '');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Waits for `/readyz` to answer 200 (caches synced); throws if the process exits first. */
  async waitReady(timeoutMs: number, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      signal.throwIfAborted();
      if (!this.running)
        throw new Error(`${this.name} exited during start-up; its log ends with:\n${await this.tail()}`);
      const status = await fetch(`http://127.0.0.1:${this.port}/readyz`, {
        signal: AbortSignal.timeout(1000),
      }).then(
        (response) => response.status,
        () => undefined,
      );
      if (status === 200) return;
      await sleep(200, undefined, { signal });
    }
    throw new Error(`${this.name} not ready after ${timeoutMs / 1000}s; see ${this.logPath}`);
  }

  /** Graceful stop (SIGTERM: the Manager drains its workers), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}
