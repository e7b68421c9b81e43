/**
 * The controllers, started the way the cluster allows: as pods of their charts where a node runs pods,
 * else as child processes from source (as `pnpm nx serve` runs them).
 */
import { loadImagesIntoNode, type TestNode } from '@loopwright/cluster';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  controllerPods,
  createCredentialSecrets,
  installChart,
  RELEASES,
  restartedControllerPod,
  saveControllerLogs,
  uninstallChart,
} from './charts.ts';
import { ControllerProcess, controllerSpecs } from './controllers.ts';
import type { DemoCluster } from './environment.ts';
import type { Fakes } from './fakes.ts';
import { NAMESPACE } from './names.ts';
import type { Shutdown } from './shutdown.ts';

/** The demo's shutdown (for undo steps and the abort signal) and its way of printing a line. */
export interface Context {
  shutdown: Shutdown;
  say: (line: string) => void;
}

/** The controllers as they run, whichever way they were started. */
export interface RunningControllers {
  /** Why they cannot converge any more (one exited), checked while the table is live. */
  failure(): Promise<string | undefined>;
}

/** As child processes from source, each logging to a file in `logDir`. */
export async function startControllerProcesses(
  ctx: Context,
  cluster: DemoCluster,
  fakes: Fakes,
  dir: string,
): Promise<RunningControllers> {
  const controllers: ControllerProcess[] = [];
  ctx.say(`controller logs: ${dir}`);
  for (const spec of controllerSpecs(fakes)) {
    ctx.shutdown.signal.throwIfAborted();
    const controller = await ControllerProcess.start(spec, dir, cluster.kubeconfigEnv);
    ctx.shutdown.defer(`stop ${spec.name}`, () => controller.stop());
    controllers.push(controller);
  }
  ctx.say(
    `starting ${controllers.map((c) => `${c.name} (:${c.port})`).join(', ')} in namespace ${NAMESPACE}`,
  );
  await Promise.all(controllers.map((c) => c.waitReady(60_000, ctx.shutdown.signal)));
  return {
    async failure() {
      const exited = controllers.find((c) => !c.running);
      return exited && `${exited.name} exited; its log ends with:\n${await exited.tail()}`;
    },
  };
}

/** The images the charts name, built from the Dockerfile and imported into the node. */
async function loadImages(ctx: Context, node: TestNode): Promise<void> {
  const outDir = await mkdtemp(join(tmpdir(), 'loopwright-demo-images-'));
  ctx.shutdown.defer('remove the image archives', () => rm(outDir, { recursive: true, force: true }));
  ctx.say(
    `building the controllers' images from the Dockerfile, importing them and busybox:1.37.0 ` +
      `(the At's image) into node ${node.nodeName}`,
  );
  const started = Date.now();
  await loadImagesIntoNode(node, {
    outDir,
    log: (line) => {
      ctx.say(`  ${line}`);
    },
  });
  ctx.say(`images imported in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

/** As pods of their charts, installed with helm; their logs are saved to `dir` before uninstalling. */
export async function installControllerCharts(
  ctx: Context,
  cluster: DemoCluster & { mode: 'node' },
  fakes: Fakes,
  dir: string,
): Promise<RunningControllers> {
  const { client, kubeconfigEnv } = cluster;
  await loadImages(ctx, cluster.node);
  ctx.shutdown.signal.throwIfAborted();
  await createCredentialSecrets(client, fakes);
  // Registered before installing, so that a half-done install is undone too; the logs are saved first.
  ctx.shutdown.defer('uninstall the charts', async () => {
    await Promise.all(RELEASES.map((controller) => uninstallChart(controller, kubeconfigEnv)));
    ctx.say(`uninstalled the releases ${RELEASES.join(', ')}`);
  });
  ctx.shutdown.defer("save the controllers' logs", async () => {
    const saved = await saveControllerLogs(client, dir);
    ctx.say(`saved the logs of the controller pods (${saved.length}) to ${dir}`);
  });
  ctx.say(
    `installing the charts ${RELEASES.join(', ')} into namespace ${NAMESPACE} ` +
      '(helm install --wait, 1 replica each)',
  );
  await Promise.all(RELEASES.map((controller) => installChart(controller, fakes, kubeconfigEnv)));
  for (const controller of RELEASES)
    for (const pod of await controllerPods(client, controller))
      ctx.say(
        `  ${controller}: Deployment ${controller} ready, pod ${pod.pod} ${pod.phase ?? '?'} on node ` +
          `${pod.nodeName ?? '?'} (${pod.image ?? '?'})`,
      );
  const kubeconfig = cluster.outlivesDemo ? '' : `KUBECONFIG=${kubeconfigEnv} `;
  ctx.say(
    `controller logs: ${kubeconfig}kubectl logs -n ${NAMESPACE} deploy/<controller> while the demo runs; ` +
      `saved to ${dir} when it ends`,
  );
  // A crashed controller is restarted by the kubelet; the demo stops rather than hide it.
  return { failure: () => restartedControllerPod(client) };
}
