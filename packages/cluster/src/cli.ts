/**
 * `pnpm controlplane <command>` and `pnpm cluster <command>` (this file with `--node`): the test control
 * plane, or the single-node cluster, for humans.
 *   build   build (or find cached) the test tools (etcd, the Kubernetes control plane and node, kubectl,
 *           helm, Prometheus, the Cluster API core manager, Mailgun's mock: see tools/tools.ts) and link
 *           helm and kubectl where set-up says, then the release tools (the registry, crane, syft,
 *           cosign: tools/release-tools.ts): `scripts/setup.sh` runs it, so neither tests nor
 *           `pnpm demo` compile anything later
 *   up      start one in the background (state in .controlplane/ or .cluster/ at the repo root); a
 *           node comes with an OCI registry beside it (`pnpm release --local` publishes to it) and the
 *           stand-in busybox image
 *   down    stop it (a node puts the machine back as it found it)
 *   env     print shell exports for it: eval "$(pnpm -s controlplane env)"
 *   run     start one in the foreground until Ctrl-C
 * `up` and `run` take `--feature-gates=Name=true,...` for kube-apiserver, e.g.
 * `--feature-gates=ShardedListAndWatch=true` for a sharded controller's server-side mode (see
 * feature-gates.ts).
 */
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureTestTools, pinnedTools, startControlPlane, type ControlPlane } from '@loopwright/envtest';
import {
  backgroundStatePath,
  readBackgroundState,
  writeBackgroundState,
  type BackgroundState,
} from './node/background-state.ts';
import { startCluster, type Cluster } from './node/cluster.ts';
import { loadImagesIntoNode } from './node/node-images.ts';
import { testNodeExports, testNodeOf } from './node/test-node.ts';
import { apiServerFlagsOf } from './feature-gates.ts';
import { linkCommandLineTools } from './tools/command-line.ts';
import { ensureReleaseTools, pinnedReleaseTools } from './tools/release-tools.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const withNode = process.argv.includes('--node');
const what = withNode ? 'cluster' : 'control plane';
const scriptName = withNode ? 'cluster' : 'controlplane';
const statePath = backgroundStatePath(repoRoot, withNode);
const stateDir = dirname(statePath);
let apiServerFlags: string[] = [];
try {
  apiServerFlags = apiServerFlagsOf(process.argv.slice(2));
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}

type State = BackgroundState;
const readState = () => readBackgroundState(statePath);

function exportsFor(state: State): string {
  const exports = state.node
    ? testNodeExports(state.kubeconfigPath, state.node)
    : { KUBECONFIG: state.kubeconfigPath, LOOPWRIGHT_CONTROLPLANE: '1' };
  // Single-quoted for the shell: the node's JSON has double quotes.
  return Object.entries(exports)
    .map(([name, value]) => `export ${name}='${value}'\n`)
    .join('');
}

/** Runs a control plane until SIGINT/SIGTERM, then stops it. Used by `run` and, detached, by `up`. */
async function runForeground(onUp: (cp: ControlPlane | Cluster) => Promise<void> | void): Promise<void> {
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const options = { dir: join(stateDir, 'data'), log, apiServerFlags };
  let cp: ControlPlane | Cluster;
  if (withNode) {
    const cluster = await startCluster(options);
    cp = cluster;
    // The controllers come from its registry (`pnpm release --local`), as a user's cluster pulls a
    // release; imported are only the stand-ins for public images (busybox, the At's default image).
    await loadImagesIntoNode(testNodeOf(cluster), {
      outDir: join(stateDir, 'images'),
      log,
      controllers: [],
    }).catch(async (error: unknown) => {
      await cluster.stop();
      throw error;
    });
  } else {
    cp = await startControlPlane(options);
  }
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    void cp
      .stop()
      .then(() => rm(stateDir, { recursive: true, force: true }))
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  await onUp(cp);
}

async function main(command: string | undefined): Promise<void> {
  switch (command) {
    case 'build': {
      const tools = await ensureTestTools({
        log: (line) => {
          console.log(line);
        },
      });
      const pinned = await pinnedTools();
      console.log(
        `test tools: Kubernetes ${pinned.kubernetes} and kubectl, etcd ${pinned.etcd}, helm ${pinned.helm}, Prometheus ${pinned.prometheus.release}, Cluster API ${pinned.clusterApi.version}, Mailgun's mock in ${dirname(tools.etcd)}`,
      );
      console.log(`helm and kubectl linked in ${await linkCommandLineTools(tools)}`);
      const releaseTools = await ensureReleaseTools({
        log: (line) => {
          console.log(line);
        },
      });
      const release = await pinnedReleaseTools();
      console.log(
        `release tools: distribution ${release.registry}, crane ${release.crane}, syft ${release.syft}, cosign ${release.cosign} in ${dirname(releaseTools.registry)}`,
      );
      return;
    }
    case 'up': {
      const existing = await readState();
      if (existing) {
        console.error(`${what} already running at ${existing.server}`);
        process.stdout.write(exportsFor(existing));
        return;
      }
      await rm(stateDir, { recursive: true, force: true });
      await mkdir(stateDir, { recursive: true });
      const logFd = openSync(join(stateDir, 'supervisor.log'), 'a');
      const child = spawn(
        process.execPath,
        [
          '--conditions=development',
          fileURLToPath(import.meta.url),
          'supervise',
          ...(withNode ? ['--node'] : []),
          ...apiServerFlags,
        ],
        {
          detached: true,
          stdio: ['ignore', logFd, logFd],
        },
      );
      child.unref();
      for (let waited = 0; waited < 600_000; waited += 200) {
        const state = await readState();
        if (state) {
          console.error(`${what} up at ${state.server}; stop it with: pnpm ${scriptName} down`);
          process.stdout.write(exportsFor(state));
          return;
        }
        if (child.exitCode !== null) break;
        await sleep(200);
      }
      throw new Error(`${what} did not start; see ${join(stateDir, 'supervisor.log')}`);
    }
    case 'supervise':
      return runForeground(async (cp) => {
        const state: State = {
          pid: process.pid,
          server: cp.server,
          kubeconfigPath: cp.kubeconfigPath,
          ...('nodeName' in cp ? { node: testNodeOf(cp) } : {}),
        };
        await writeBackgroundState(statePath, state);
      });
    case 'run':
      return runForeground((cp) => {
        console.log(
          `${withNode ? 'Cluster' : 'Control plane'} up at ${cp.server}. In another shell:\n  export KUBECONFIG=${cp.kubeconfigPath}\nCtrl-C stops it.`,
        );
      });
    case 'down': {
      const state = await readState();
      if (!state) {
        console.error(`no ${what} running`);
        await rm(stateDir, { recursive: true, force: true });
        return;
      }
      process.kill(state.pid, 'SIGTERM');
      while (await readState()) await sleep(100);
      console.error(`${what} stopped`);
      return;
    }
    case 'env': {
      const state = await readState();
      if (!state) throw new Error(`no ${what} running: start one with \`pnpm ${scriptName} up\``);
      process.stdout.write(exportsFor(state));
      return;
    }
    default:
      console.error(`usage: pnpm ${scriptName} build|up|down|env|run [--feature-gates=Name=true,...]`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2).find((arg) => !arg.startsWith('--'))).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
