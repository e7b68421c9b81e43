/**
 * What each controller needs to become ready against the test control plane when run as a process of
 * its own (its bundle, or its sources): CRDs installed, its third party faked, its environment. Used by
 * bundle.test.ts and the footprint bench. The environment confines the controller to `namespace`: the
 * API server is shared with other suites, and the process runs as admin.
 */
import {
  controllerProgram,
  startClusterApi,
  workspaceControllers,
  type WorkspaceController,
} from '@loopwright/cluster';
import { applyCrds, freeLoopbackPort, readCrdFiles } from '@loopwright/envtest';
import { startFakeHcloud } from '@loopwright/fakes/hcloud';
import type { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';

/** The chart's CRDs, applied as the e2e suites' field manager, and served. */
async function installCrds(admin: KubeConfig, controller: WorkspaceController): Promise<void> {
  await applyCrds(admin, readCrdFiles(controller.crdFiles), {
    fieldManager: 'loopwright-e2e',
  });
}

export interface ControllerSetup {
  /** The env beyond KUBECONFIG, the probe address and the pod's name and namespace (where the Lease goes). */
  env: Record<string, string>;
  /** Stops what the setup started (a fake third party). */
  close?: () => Promise<unknown>;
}

type Setup = (
  admin: KubeConfig,
  namespace: string,
  controller: WorkspaceController,
) => Promise<ControllerSetup>;

/**
 * Any controller without a set-up of its own below (a new one from the generator): its chart's CRDs, and,
 * when its program is namespaced (its `src/config.ts`), WATCH_NAMESPACE.
 */
const defaultSetup: Setup = async (admin, namespace, controller) => {
  await installCrds(admin, controller);
  const { namespaced } = await controllerProgram<{ namespaced: boolean }>(controller);
  const env: Record<string, string> = namespaced ? { WATCH_NAMESPACE: namespace } : {};
  return { env };
};

/** The controllers that need more than the default (at-scheduler needs exactly the default). */
const ownSetups: Readonly<Record<string, Setup>> = {
  'mailgun-cluster': async (admin, namespace, controller) => {
    await installCrds(admin, controller);
    // The Clusters and Machines its caches list: Cluster API's CRDs, with its manager for the namespace.
    const clusterApi = await startClusterApi({ kubeConfig: admin, namespace });
    return {
      env: {
        WATCH_NAMESPACE: namespace,
        MAILGUN_DOMAIN: 'mg.example.com',
        MAILGUN_API_KEY: `key-${randomBytes(16).toString('hex')}`,
        MAIL_RECIPIENT: 'clusters@example.com',
        // Nothing is sent: the namespace holds no MailgunCluster. A closed port, should that change.
        MAILGUN_URL: `http://127.0.0.1:${await freeLoopbackPort()}`,
      },
      close: () => clusterApi.stop(),
    };
  },

  'cloud-node': async () => {
    // The start-up token check needs an answer: the fake Hetzner Cloud API, with a fresh token.
    const token = randomBytes(32).toString('hex');
    const fake = await startFakeHcloud({ token });
    return {
      env: {
        HCLOUD_TOKEN: token,
        HCLOUD_ENDPOINT: fake.url,
        // cloud-node deletes Nodes whose servers are gone, and the fake has no server: a selector that no
        // Node of the other suites matches.
        NODE_SELECTOR: `loopwright.dev/bundle-test=${randomBytes(3).toString('hex')}`,
      },
      close: () => fake.close(),
    };
  },
};

/** Prepares the control plane for `controller` (a name of the workspace's controllers) and gives its env. */
export async function setUpController(
  controller: string,
  admin: KubeConfig,
  namespace: string,
): Promise<ControllerSetup> {
  const found = workspaceControllers().find(({ name }) => name === controller);
  if (!found) throw new Error(`${controller} is not a controller of the workspace`);
  return (ownSetups[controller] ?? defaultSetup)(admin, namespace, found);
}
