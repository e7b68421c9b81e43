/**
 * Initial sync of 10k ConfigMaps of about 1.5 KB each: a streaming list (WatchList, KEP-3157) against
 * a paginated list then a watch, against the same real API server in the same run, in alternating
 * rounds. Reports time to synced, peak heap and RSS during the sync, heap retained after it, and what
 * the sync made the API server allocate.
 *
 * Each sync runs in a child process of its own (fresh heap, `--expose-gc`): a warm-up sync of a small
 * namespace the same way (modules, JIT, TLS), a full GC, then heapUsed is the baseline. During the big
 * sync, V8's used heap is sampled every millisecond the event loop gets to run (and once more at
 * synced): the peak minus the baseline is the transient memory the sync needed, kubernetes#129467's
 * question; the process's resident set is sampled alike (what a container's memory limit sees). The
 * API server's `go_memstats_alloc_bytes_total` before and after is what the sync made it allocate
 * (one child at a time; kube-controller-manager's quiet background traffic counts in both). After a
 * full GC with the cache still referenced, heapUsed minus the baseline is what stays.
 * The informer is configured as the runtime's Manager configures it (stripManagedFields).
 *
 *   pnpm run bench       (OBJECTS=2000 for a quicker run; ROUNDS=5 for more rounds)
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject } from '@loopwright/client';
import { startControlPlane, type ControlPlane } from '@loopwright/envtest';
import { Informer, stripManagedFields, type InitialSync } from '../src/index.ts';
import { minMedianMax } from './stats.ts';

const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const NAMESPACE = 'initial-sync-bench';
const WARMUP_NAMESPACE = 'initial-sync-bench-warmup';
const CREATE_CONCURRENCY = 32;
const MODES: Record<InitialSync, string> = {
  list: 'list, then watch (pages of 500)',
  'watch-list': 'streaming list (watch-list)',
};

const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };

interface Measurement {
  syncMs: number;
  cached: number;
  peakHeap: number;
  peakRss: number;
  retainedHeap: number;
}

async function sync(
  initialSync: InitialSync,
  kc: KubeConfig,
  namespace: string,
): Promise<{ cached: number; cache: Informer<KubeObject> }> {
  const client = new KubeClient(kc, { rateLimit: false });
  const informer = new Informer<KubeObject>({
    client,
    ...CONFIGMAPS,
    namespace,
    initialSync,
    transform: stripManagedFields,
    logger: { debug: () => undefined, warn: () => undefined, error: () => undefined },
  });
  informer.start();
  await informer.waitForSync();
  const cached = informer.lister.list().length;
  informer.stop();
  await client.close();
  return { cached, cache: informer };
}

async function measureInThisProcess(initialSync: InitialSync): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc (pnpm run bench does)');
  const heapUsed = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const kc = new KubeConfig();
  kc.loadFromDefault();
  await sync(initialSync, kc, WARMUP_NAMESPACE);
  const before = heapUsed();
  const rssBefore = process.memoryUsage.rss();
  let peak = 0;
  let peakRss = 0;
  const sample = (): void => {
    peak = Math.max(peak, getHeapStatistics().used_heap_size);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  };
  const sampler = setInterval(sample, 1);
  const started = performance.now();
  const { cached, cache } = await sync(initialSync, kc, NAMESPACE);
  const syncMs = performance.now() - started;
  sample();
  clearInterval(sampler);
  const after = heapUsed();
  const measurement: Measurement = {
    syncMs,
    cached,
    peakHeap: peak - before,
    peakRss: peakRss - rssBefore,
    retainedHeap: after - before,
  };
  process.stdout.write(JSON.stringify(measurement));
  // `cache` is used after the last GC so that it is certainly retained during the measurement.
  if (cache.lister.list().length !== cached) throw new Error('unreachable');
}

/** About 1.5 KB of data per ConfigMap, as configuration files tend to look. */
function configData(i: number): Record<string, string> {
  const lines = Array.from(
    { length: 24 },
    (_, line) => `setting_${line}: value-${i}-${line}-${'abcdefghij'.repeat(4)}`,
  );
  return { index: String(i), 'app.yaml': lines.join('\n') };
}

async function createConfigMaps(client: KubeClient, namespace: string, count: number): Promise<void> {
  await client
    .resource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false })
    .create({ metadata: { name: namespace } });
  const configMaps = client.resource<KubeObject & { data: Record<string, string> }>(CONFIGMAPS);
  let next = 0;
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        await configMaps.create({
          metadata: { namespace, name: `cm-${i}`, labels: { app: `app-${i % 10}` } },
          data: configData(i),
        });
      }
    }),
  );
}

/**
 * Bytes the API server has allocated since it started (`go_memstats_alloc_bytes_total`): its difference
 * over a sync is the work the sync cost the server, unlike a heap figure independent of when Go collects.
 */
async function serverBytesAllocated(controlPlane: ControlPlane, ca: string): Promise<number> {
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(
      `${controlPlane.server}/metrics`,
      { ca, headers: { authorization: `Bearer ${controlPlane.adminToken}` } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          resolve(body);
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
  const line = text.split('\n').find((l) => l.startsWith('go_memstats_alloc_bytes_total '));
  return Number(line?.split(' ')[1] ?? NaN);
}

const run = promisify(execFile);

/** One sync in a child process, and what the API server allocated meanwhile. */
async function measureInChildProcess(
  initialSync: InitialSync,
  controlPlane: ControlPlane,
  ca: string,
): Promise<Measurement & { serverAllocated: number }> {
  const serverBefore = await serverBytesAllocated(controlPlane, ca);
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', '--conditions=development', fileURLToPath(import.meta.url), 'measure', initialSync],
    { env: { ...process.env, KUBECONFIG: controlPlane.kubeconfigPath }, encoding: 'utf8' },
  );
  const serverAllocated = (await serverBytesAllocated(controlPlane, ca)) - serverBefore;
  const result = JSON.parse(stdout) as Measurement;
  if (result.cached !== OBJECTS)
    throw new Error(`${initialSync} cached ${result.cached}, expected ${OBJECTS}`);
  return { ...result, serverAllocated };
}

function report(measurements: Record<InitialSync, (Measurement & { serverAllocated: number })[]>): void {
  const spread = (values: readonly number[], format: (value: number) => string): string =>
    minMedianMax(values).map(format).join(' / ');
  const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
  console.log(
    `\ninitial sync of ${OBJECTS} ConfigMaps (~1.5 KB each), ${ROUNDS} alternating rounds (node ${process.version}, a child process per sync); min / median / max`,
  );
  console.log(
    'initial sync'.padEnd(34) +
      'synced in (s)'.padStart(24) +
      'peak heap over baseline (MiB)'.padStart(34) +
      'peak RSS over baseline (MiB)'.padStart(34) +
      'retained heap (MiB)'.padStart(26) +
      'API server allocated (MiB)'.padStart(32),
  );
  for (const [mode, name] of Object.entries(MODES) as [InitialSync, string][]) {
    const runs = measurements[mode];
    console.log(
      name.padEnd(34) +
        spread(
          runs.map((m) => m.syncMs),
          (ms) => (ms / 1000).toFixed(2),
        ).padStart(24) +
        spread(
          runs.map((m) => m.peakHeap),
          mib,
        ).padStart(34) +
        spread(
          runs.map((m) => m.peakRss),
          mib,
        ).padStart(34) +
        spread(
          runs.map((m) => m.retainedHeap),
          mib,
        ).padStart(26) +
        spread(
          runs.map((m) => m.serverAllocated),
          mib,
        ).padStart(32),
    );
  }
}

async function main(): Promise<void> {
  const controlPlane = await startControlPlane({ log: () => undefined });
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(controlPlane.kubeconfigPath);
    const client = new KubeClient(kc, { rateLimit: false });
    const createStarted = performance.now();
    await createConfigMaps(client, NAMESPACE, OBJECTS);
    await createConfigMaps(client, WARMUP_NAMESPACE, 50);
    await client.close();
    console.log(
      `created ${OBJECTS} ConfigMaps in ${((performance.now() - createStarted) / 1000).toFixed(1)} s`,
    );
    const ca = readFileSync(controlPlane.caPath, 'utf8');
    const measurements: Record<InitialSync, (Measurement & { serverAllocated: number })[]> = {
      list: [],
      'watch-list': [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so that neither always meets a warmer server.
      const order: InitialSync[] = round % 2 === 0 ? ['list', 'watch-list'] : ['watch-list', 'list'];
      for (const mode of order) measurements[mode].push(await measureInChildProcess(mode, controlPlane, ca));
    }
    report(measurements);
  } finally {
    await controlPlane.stop();
  }
}

if (process.argv[2] === 'measure') await measureInThisProcess(process.argv[3] as InitialSync);
else await main();
