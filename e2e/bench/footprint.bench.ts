/**
 * `pnpm bench` (e2e): what each controller costs as a process, its image's bundle against its sources,
 * both against bare Node in the same run. For each controller, RUNS rounds of three processes, one after
 * the other, on a test control plane (reused when KUBECONFIG names one of `pnpm controlplane up`):
 *
 * - bare Node: `node -e` that idles (ready once it runs);
 * - bundle: the image's command line (the Dockerfile's ENTRYPOINT) in the bundle that scripts/bundle.sh
 *   makes, with this Node;
 * - source: `node --conditions=development src/main.ts`, as `pnpm nx serve` runs it.
 *
 * Per process: CPU time (user + system) from spawn to the first /readyz 200, RSS after SETTLE_MS of
 * idling and its anonymous part (RssAnon: what the process itself allocated, without the node binary's
 * file-backed pages, whose resident share varies from day to day), and the wall time of `--help` (bare
 * Node: `node -e 0`). Printed as min / median / max, with the median's ratio to bare Node's, and each
 * bundle's size: the image's app layer, as files and as tar.gz. The targets for the bundle: idle RSS <= 90 MB, CPU to ready <= 0.5 s, --help <= 150 ms.
 */
import { workspaceControllers } from '@loopwright/cluster';
import {
  createTestNamespace,
  freeLoopbackPort,
  loadTestKubeConfig,
  startControlPlane,
} from '@loopwright/envtest';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildBundle, imageNodeArgs } from '../src/bundle.ts';
import { repoRoot } from '../src/charts.ts';
import { setUpController } from '../src/controller-setups.ts';
import { measureExit, measureStart, type Command } from './process-footprint.ts';

const RUNS = 3;
const SETTLE_MS = 10_000;

const variants = ['bare Node', 'bundle', 'source'] as const;
type Variant = (typeof variants)[number];

interface Samples {
  readyCpuMs: number[];
  idleRssMB: number[];
  idleRssAnonMB: number[];
  helpMs: number[];
}

async function readyz(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`);
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** Only what the process is given: PATH, and nothing of this process's own (NODE_OPTIONS, NODE_PATH...). */
function cleanEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: '/usr/bin:/bin', ...env };
}

async function sizeOf(dir: string): Promise<{ files: number; bytes: number; tarGzBytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files++;
    bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  // As the image's layer holds it: every entry root-owned, in name order, gzip'ed.
  const { stdout } = await promisify(execFile)(
    'tar',
    ['-czf', '-', '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', dir, '.'],
    { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 },
  );
  return { files, bytes, tarGzBytes: stdout.length };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? NaN)
    : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
}

function summary(values: readonly number[], baseline: readonly number[], digits: number): string {
  const fixed = (value: number) => value.toFixed(digits);
  const ratio = median(values) / median(baseline);
  return `${fixed(Math.min(...values))} / ${fixed(median(values))} / ${fixed(Math.max(...values))} (x${ratio.toFixed(2)})`;
}

async function benchController(controller: string, workDir: string): Promise<void> {
  const admin = loadTestKubeConfig();
  const namespace = await createTestNamespace(admin, `footprint-${controller}`);
  const setup = await setUpController(controller, admin, namespace.name);
  try {
    const bundleDir = join(workDir, controller);
    await buildBundle(controller, bundleDir);
    const packageDir = join(repoRoot, 'packages', controller);
    const nodeArgs = await imageNodeArgs(controller);
    const commandOf = (variant: Variant, args: string[], env: Record<string, string>): Command => {
      switch (variant) {
        case 'bare Node':
          return { args, cwd: workDir, env: cleanEnv({}) };
        case 'bundle':
          return { args: [...nodeArgs, ...args], cwd: bundleDir, env: cleanEnv(env) };
        case 'source':
          return {
            args: ['--conditions=development', 'src/main.ts', ...args],
            cwd: packageDir,
            env: cleanEnv(env),
          };
      }
    };
    const samples = Object.fromEntries(
      variants.map((variant) => [variant, { readyCpuMs: [], idleRssMB: [], idleRssAnonMB: [], helpMs: [] }]),
    ) as unknown as Record<Variant, Samples>;

    for (let run = 0; run < RUNS; run++) {
      for (const variant of variants) {
        const port = await freeLoopbackPort();
        const env = {
          ...setup.env,
          KUBECONFIG: process.env.KUBECONFIG ?? '',
          HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${port}`,
          METRICS_BIND_ADDRESS: '0',
          POD_NAME: `${controller}-footprint`,
          POD_NAMESPACE: namespace.name,
          LOG_FORMAT: 'json',
        };
        const bare = variant === 'bare Node';
        const start = bare
          ? commandOf(
              variant,
              ['-e', "process.stdout.write('ready\\n'); setInterval(() => {}, 1 << 30);"],
              env,
            )
          : commandOf(variant, [], env);
        const footprint = await measureStart(
          start,
          bare ? (output) => Promise.resolve(output.includes('ready\n')) : () => readyz(port),
          SETTLE_MS,
        );
        samples[variant].readyCpuMs.push(footprint.readyCpuMs);
        samples[variant].idleRssMB.push(footprint.idleRssMB);
        samples[variant].idleRssAnonMB.push(footprint.idleRssAnonMB);
        samples[variant].helpMs.push(
          await measureExit(commandOf(variant, bare ? ['-e', '0'] : ['--help'], env)),
        );
      }
    }

    const size = await sizeOf(bundleDir);
    const baseline = samples['bare Node'];
    const rows: [string, keyof Samples, number][] = [
      ['idle RSS, MB (target <= 90)', 'idleRssMB', 1],
      ['  of which anonymous, MB', 'idleRssAnonMB', 1],
      ['CPU spawn -> ready, ms (<= 500)', 'readyCpuMs', 0],
      ['--help wall, ms (<= 150)', 'helpMs', 0],
    ];
    const lines = [
      `${controller}: ${RUNS} runs, min / median / max (median / bare Node's)`,
      `  ${''.padEnd(34)}${variants.map((variant) => variant.padEnd(34)).join('')}`,
      ...rows.map(
        ([label, key, digits]) =>
          `  ${label.padEnd(34)}${variants.map((variant) => summary(samples[variant][key], baseline[key], digits).padEnd(34)).join('')}`,
      ),
      `  bundle (the image's app layer): ${size.files} files, ${size.bytes} bytes, tar.gz ${size.tarGzBytes} bytes`,
    ];
    process.stdout.write(`${lines.join('\n')}\n\n`);
  } finally {
    await setup.close?.();
    await namespace.cleanup();
  }
}

const reuse = process.env.LOOPWRIGHT_CONTROLPLANE === '1' && process.env.KUBECONFIG;
const controlPlane = reuse ? undefined : await startControlPlane();
if (controlPlane) process.env.KUBECONFIG = controlPlane.kubeconfigPath;
const workDir = await mkdtemp(join(tmpdir(), 'loopwright-footprint-'));
try {
  process.stdout.write(
    `Node ${process.version}; bundle command: node ${[...(await imageNodeArgs('at-scheduler'))].join(' ')}\n\n`,
  );
  for (const { name } of workspaceControllers()) await benchController(name, workDir);
} finally {
  await rm(workDir, { recursive: true, force: true });
  await controlPlane?.stop();
}
