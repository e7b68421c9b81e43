/**
 * The e2e run's global setup: the pinned helm and Prometheus built once before any test file starts
 * (files run in parallel processes; without this each would start its own cold `go build` on a fresh
 * machine), then one real single-node cluster for every suite, with the controllers' images built from
 * their Dockerfiles and imported under the names the charts use (only those LOOPWRIGHT_E2E_CONTROLLERS
 * names, comma-separated, when it is set). A cluster already provided by
 * `eval "$(pnpm -s cluster env)"` is reused (its images are rebuilt and imported again, so they match
 * the sources).
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
} from '@loopwright/testing';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let cluster: Cluster | undefined;
let imagesDir: string | undefined;
const log = (line: string): void => void process.stderr.write(`[e2e] ${line}\n`);

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
  // A run for some controllers only (the generator's suite runs the new one's, on this run's node while
  // the other suites use theirs) builds and imports only theirs.
  const only = process.env.LOOPWRIGHT_E2E_CONTROLLERS?.split(',').filter(Boolean);
  await loadImagesIntoNode(node, { outDir: imagesDir, log, ...(only ? { controllers: only } : {}) });
}

export async function globalTeardown(): Promise<void> {
  await cluster?.stop();
  if (imagesDir) await rm(imagesDir, { recursive: true, force: true });
}
