import type { KubeConfig, V1Service } from '@kubernetes/client-node';
import { KubeClient } from '@loopwright/client';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import {
  createTestNamespace,
  eventually,
  freeLoopbackPort,
  loadTestKubeConfig,
  type TestNamespace,
} from '@loopwright/envtest';
import { ensurePrometheusBinary, pinnedPrometheusVersion } from './binary.ts';

const run = promisify(execFile);

/** Writes the admin's CA and token where a `kubernetes_sd_configs` entry can read them. */
async function kubernetesSdConfig(kc: KubeConfig, dir: string, namespace: string): Promise<object> {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.caData && !cluster?.caFile) throw new Error('the test kubeconfig has no CA');
  const caFile = cluster.caFile ?? join(dir, 'ca.crt');
  if (!cluster.caFile) await writeFile(caFile, Buffer.from(cluster.caData ?? '', 'base64'));
  await writeFile(join(dir, 'token'), kc.getCurrentUser()?.token ?? '', { mode: 0o600 });
  return {
    role: 'service',
    api_server: cluster.server,
    tls_config: { ca_file: caFile },
    authorization: { credentials_file: join(dir, 'token') },
    namespaces: { names: [namespace] },
  };
}

describe('the pinned Prometheus', () => {
  let binary: string;
  let kc: KubeConfig;
  let ns: TestNamespace;
  let dir: string;

  before(async () => {
    binary = await ensurePrometheusBinary();
    kc = loadTestKubeConfig();
    ns = await createTestNamespace(kc, 'prometheus-sd');
    dir = await mkdtemp(join(tmpdir(), 'loopwright-prometheus-test-'));
  });
  after(async () => {
    await ns.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('reports the release its Go module pins', async () => {
    const { stdout } = await run(binary, ['--version']);
    const { release, module } = await pinnedPrometheusVersion();
    assert.match(stdout, new RegExp(`^prometheus, version ${release.replaceAll('.', '\\.')} .*${module}`));
  });

  it('discovers a Service through the Kubernetes API, and exits 0 on SIGTERM', async () => {
    const client = new KubeClient(kc, { rateLimit: false });
    try {
      await client
        .resource<V1Service>({
          group: '',
          version: 'v1',
          plural: 'services',
          kind: 'Service',
          namespaced: true,
        })
        .create({
          metadata: { name: 'demo-metrics', namespace: ns.name },
          spec: { ports: [{ name: 'metrics', port: 8080 }], selector: { app: 'demo' } },
        });
    } finally {
      await client.close();
    }
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '1s' },
      scrape_configs: [
        { job_name: 'services', kubernetes_sd_configs: [await kubernetesSdConfig(kc, dir, ns.name)] },
      ],
    };
    await writeFile(join(dir, 'prometheus.yml'), stringify(config));
    const port = await freeLoopbackPort();
    const prometheus = spawn(
      binary,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let output = '';
    prometheus.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exitCode = new Promise<number | null>((resolve) => prometheus.once('exit', resolve));
    try {
      await eventually(
        async () => {
          assert.equal((await fetch(`http://127.0.0.1:${port}/-/ready`)).status, 200);
          const response = await fetch(`http://127.0.0.1:${port}/api/v1/targets`);
          const { data } = (await response.json()) as {
            data: { activeTargets: { discoveredLabels: Record<string, string> }[] };
          };
          assert.deepEqual(
            data.activeTargets.map((t) => t.discoveredLabels.__address__),
            [`demo-metrics.${ns.name}.svc:8080`],
          );
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
    } catch (error) {
      prometheus.kill('SIGKILL');
      throw new Error(`prometheus output:\n${output}`, { cause: error });
    }
    prometheus.kill('SIGTERM');
    assert.equal(await exitCode, 0, output);
  });
});
