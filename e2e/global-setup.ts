/**
 * The e2e run's global setup: the pinned helm and Prometheus built once before any test file starts
 * (files run in parallel processes; without this each would start its own cold `go build` on a fresh
 * machine), then one real single-node cluster for every suite, with its OCI registry. The controllers
 * reach the node as a user's cluster gets them: `pnpm release --local` publishes this checkout's
 * release of the README's version, and the next patch release for the suites' upgrades, into the
 * registry (images signed, with SBOMs; charts by `helm push`); the suites install the charts from it
 * and containerd pulls the images. The stand-in bases (busybox, the At's default image) are imported.
 *
 * With LOOPWRIGHT_E2E_CONTROLLERS (comma-separated names: the generator's suite, for the new controller
 * of a workspace copy), those controllers' images are built and imported under their charts' names
 * instead, for charts installed from their directories. A cluster already provided by
 * `eval "$(pnpm -s cluster env)"` is reused (the release is published again, so it matches the sources).
 */
import {
  ensureHelmBinary,
  ensurePrometheusBinary,
  findTestNode,
  loadImagesIntoNode,
  startCluster,
  testNodeExports,
  testNodeOf,
  type Cluster,
} from '@loopwright/cluster';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './src/charts.ts';
import { e2eReleasesExports, nextPatch } from './src/release.ts';
import { readmeInstall } from './src/readme-install.ts';

const run = promisify(execFile);

let cluster: Cluster | undefined;
let imagesDir: string | undefined;
let releasesDir: string | undefined;
const log = (line: string): void => void process.stderr.write(`[e2e] ${line}\n`);

/** `pnpm release --local <tag>`, as a user runs it (the node found through LOOPWRIGHT_NODE). */
export async function releaseLocally(tag: string, outDir: string): Promise<void> {
  const { stdout } = await run(
    process.execPath,
    ['--conditions=development', join(repoRoot, 'scripts', 'release.ts'), '--local', tag, '--out', outDir],
    { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024, env: process.env },
  );
  for (const line of stdout.trim().split('\n')) log(line);
}

export async function globalSetup(): Promise<void> {
  await ensureHelmBinary({ log });
  await ensurePrometheusBinary({ log });
  let node = findTestNode();
  if (!node) {
    cluster = await startCluster({ log });
    node = testNodeOf(cluster);
    Object.assign(process.env, testNodeExports(cluster.kubeconfigPath, node));
    // Ctrl-C on the runner: put the machine back before exiting (the runner's own handling follows).
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => {
        void cluster?.stop().finally(() => process.exit(130));
      });
  }
  imagesDir = await mkdtemp(join(tmpdir(), 'loopwright-e2e-images-'));
  const only = process.env.LOOPWRIGHT_E2E_CONTROLLERS?.split(',').filter(Boolean);
  if (only) {
    await loadImagesIntoNode(node, { outDir: imagesDir, log, controllers: only });
    return;
  }
  await loadImagesIntoNode(node, { outDir: imagesDir, log, controllers: [] });
  releasesDir = await mkdtemp(join(tmpdir(), 'loopwright-e2e-releases-'));
  // The version every README install names (readme-install.test.ts checks they agree).
  const current = readmeInstall('at-scheduler').version;
  const next = nextPatch(current);
  for (const version of [current, next]) await releaseLocally(`v${version}`, releasesDir);
  Object.assign(
    process.env,
    e2eReleasesExports({ dir: releasesDir, registry: node.registry, current, next }),
  );
}

export async function globalTeardown(): Promise<void> {
  await cluster?.stop();
  for (const dir of [imagesDir, releasesDir]) if (dir) await rm(dir, { recursive: true, force: true });
}
