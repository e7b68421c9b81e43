/**
 * A real Prometheus on loopback, with a temporary storage dir and a 1 s scrape interval, for asserting
 * that a controller's /metrics is scrapable, by a static target or through Kubernetes service
 * discovery. It is the pinned Prometheus 3 built from its Go module (Debian's is built without
 * Kubernetes discovery); `PROMETHEUS_BINARY` names another one instead.
 */
import { ensurePrometheusBinary } from '@loopwright/cluster';
import { freeLoopbackPort } from '@loopwright/envtest';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

/** The Prometheus to run: `PROMETHEUS_BINARY`, or the pinned one (built by the global setup already). */
async function prometheusBinary(): Promise<string> {
  const override = process.env.PROMETHEUS_BINARY;
  if (override === undefined) return ensurePrometheusBinary();
  if (!existsSync(override)) throw new Error(`PROMETHEUS_BINARY=${override}: no such file`);
  return override;
}

export interface Prometheus {
  url: string;
  /** GET an API path (e.g. `/api/v1/targets`), JSON `data` field. */
  get<T>(path: string): Promise<T>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts Prometheus with these scrape configs and rule files (paths, as prometheus.yml names them); the
 * global section: scrapes and rule evaluations every second.
 */
export async function startPrometheus(options: {
  scrape_configs: object[];
  rule_files?: string[] | undefined;
}): Promise<Prometheus> {
  const binary = await prometheusBinary();
  const dir = await mkdtemp(join(tmpdir(), 'loopwright-prometheus-'));
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    scrape_configs: options.scrape_configs,
    ...(options.rule_files && { rule_files: options.rule_files }),
  };
  await writeFile(join(dir, 'prometheus.yml'), stringify(config));
  const port = await freeLoopbackPort();
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // Warnings only, so that on a failure its output shows what went wrong. (The pinned 3.14 has no
      // `runtime.log_level` in its configuration yet, which later releases prefer.)
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    output: () => output,
    async get<T>(path: string): Promise<T> {
      const response = await fetch(`${url}${path}`);
      const body = (await response.json()) as { status: string; data: T; error?: string };
      if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? response.status}`);
      return body.data;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Debian's promtool (scripts/setup.sh installs it), or `PROMTOOL_BINARY`. */
export const promtoolBinary = process.env.PROMTOOL_BINARY ?? '/usr/bin/promtool';

/**
 * `promtool check metrics` on the text of a /metrics endpoint: resolves with promtool's findings
 * (empty = clean), which it prints for exposition-format errors and for lint problems (naming, units,
 * missing HELP) alike.
 */
export async function promtoolCheckMetrics(
  metricsUrl: string,
): Promise<{ exitCode: number | null; findings: string }> {
  const text = await (await fetch(metricsUrl)).text();
  const child = spawn(promtoolBinary, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let findings = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (findings += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (findings += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      resolve(code);
    }),
  );
  child.stdin.end(text);
  return { exitCode: await exited, findings: findings.trim() };
}
