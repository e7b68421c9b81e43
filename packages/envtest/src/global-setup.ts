/**
 * node:test global setup (`--test-global-setup`): one real control plane for a package's whole test
 * run. Test files run in child processes that inherit KUBECONFIG from here. When KUBECONFIG is already
 * set to a Loopwright control plane by `pnpm controlplane up` (LOOPWRIGHT_CONTROLPLANE=1), it is reused.
 */
import { startControlPlane, type ControlPlane } from './controlplane/start.ts';

let controlPlane: ControlPlane | undefined;

export async function globalSetup(): Promise<void> {
  if (process.env.LOOPWRIGHT_CONTROLPLANE === '1' && process.env.KUBECONFIG) return;
  controlPlane = await startControlPlane({ log: (line) => process.stderr.write(`[controlplane] ${line}\n`) });
  process.env.KUBECONFIG = controlPlane.kubeconfigPath;
  process.env.LOOPWRIGHT_CONTROLPLANE = '1';
  // Ctrl-C on the runner: stop the control plane before exiting (the runner's own handling follows).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void controlPlane?.stop().finally(() => process.exit(130));
    });
  }
}

export async function globalTeardown(): Promise<void> {
  await controlPlane?.stop();
}
