/**
 * What each controller needs to become ready against the test control plane when run as a process of
 * its own (its bundle, or its sources): CRDs installed, its third party faked, its environment. Used by
 * bundle.test.ts and the footprint bench. The environment confines the controller to `namespace`: the
 * API server is shared with other suites, and the process runs as admin.
 */
import { eventually, freeLoopbackPort, startClusterApi, startFakeHcloud } from '@loopwright/testing';
import type { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Controller } from './bundle.ts';
import { chartsDir } from './charts.ts';
import { api, ApiError } from './kube.ts';

interface Crd {
  metadata: { name: string };
  [key: string]: unknown;
}

async function chartCrds(controller: Controller): Promise<Crd[]> {
  const dir = join(chartsDir, controller, 'crds');
  const files = (await readdir(dir)).filter((file) => file.endsWith('.yaml'));
  return Promise.all(files.map(async (file) => parse(await readFile(join(dir, file), 'utf8')) as Crd));
}

/** Creates the CRDs (an existing one is kept) and waits until each is Established. */
async function installCrds(admin: KubeConfig, crds: Crd[]): Promise<void> {
  const path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  for (const crd of crds) {
    await api(admin, 'POST', path, crd).catch((error: unknown) => {
      if (!(error instanceof ApiError && error.status === 409)) throw error;
    });
  }
  for (const crd of crds) {
    await eventually(
      async () => {
        const current = await api<{ status?: { conditions?: { type: string; status: string }[] } }>(
          admin,
          'GET',
          `${path}/${crd.metadata.name}`,
        );
        assert.ok(current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
      },
      { timeoutMs: 20_000 },
    );
  }
}

export interface ControllerSetup {
  /** The env beyond KUBECONFIG, the probe address and the pod's name and namespace (where the Lease goes). */
  env: Record<string, string>;
  /** Stops what the setup started (a fake third party). */
  close?: () => Promise<unknown>;
}

export const controllerSetups: Readonly<
  Record<Controller, (admin: KubeConfig, namespace: string) => Promise<ControllerSetup>>
> = {
  'at-scheduler': async (admin, namespace) => {
    await installCrds(admin, await chartCrds('at-scheduler'));
    return { env: { WATCH_NAMESPACE: namespace } };
  },

  'mailgun-cluster': async (admin, namespace) => {
    await installCrds(admin, await chartCrds('mailgun-cluster'));
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
