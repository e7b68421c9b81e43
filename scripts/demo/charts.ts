/**
 * On a node, the controllers run as users run them: pods of their charts, installed with the pinned
 * helm into the demo's namespace. Each chart gets its defaults plus only what it requires (the Secrets
 * and endpoints of the fakes, the namespace to watch, cloud-node's Node label selector), and one
 * replica instead of two: one pod per controller keeps the demo's pods and logs one per controller and
 * halves what a laptop runs; the charts' second replica is a warm standby that only matters when a node
 * is lost, which a single-node demo cannot show.
 */
import type { KubeClient, KubeObject } from '@loopwright/runtime';
import { helm } from '@loopwright/cluster';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ThirdParties } from './controllers.ts';
import { MAIL_RECIPIENT, MAILGUN_DOMAIN, MANAGED_BY, NAMESPACE, NODE_LABEL } from './names.ts';
import { podLog } from './pods.ts';
import { repoRoot } from './repo.ts';
import { PODS, SECRETS } from './resources.ts';
import { CONTROLLERS } from './workspace.ts';

/** The charts' container that runs the controller. */
const CONTROLLER_CONTAINER = 'controller';
const CREDENTIAL_SECRETS = { hcloud: 'hcloud', mailgun: 'mailgun' } as const;

/** The release of each controller: named like its chart, so the Deployment is `deploy/<controller>`. */
export const RELEASES: readonly string[] = CONTROLLERS.map(({ name }) => name);

/**
 * The values each chart requires (beyond its defaults), as `--set-json` pairs. A namespaced controller's
 * chart has `watchNamespaces` (so at-scheduler needs nothing else).
 */
function chartValues(controller: string, fakes: ThirdParties): Record<string, unknown> {
  const [[labelKey, labelValue]] = Object.entries(NODE_LABEL) as [[string, string]];
  const namespaced = CONTROLLERS.find(({ name }) => name === controller)?.namespaced;
  const common = { replicaCount: 1, ...(namespaced ? { watchNamespaces: [NAMESPACE] } : {}) };
  switch (controller) {
    case 'mailgun-cluster':
      return {
        ...common,
        'mailgun.domain': MAILGUN_DOMAIN,
        'mailgun.url': fakes.mailgun.url,
        'mailgun.apiKey.existingSecret': CREDENTIAL_SECRETS.mailgun,
        recipient: MAIL_RECIPIENT,
      };
    case 'cloud-node':
      return {
        ...common,
        'hcloud.endpoint': fakes.hcloud.url,
        'hcloud.token.existingSecret': CREDENTIAL_SECRETS.hcloud,
        nodeLabelSelector: `${labelKey}=${labelValue}`,
      };
    default:
      return common;
  }
}

interface Secret extends KubeObject {
  stringData: Record<string, string>;
}

/** The credentials, in Secrets the charts reference (as the charts recommend, not in the releases). */
export async function createCredentialSecrets(client: KubeClient, fakes: ThirdParties): Promise<void> {
  for (const [name, stringData] of [
    [CREDENTIAL_SECRETS.hcloud, { token: fakes.hcloud.token }],
    [CREDENTIAL_SECRETS.mailgun, { 'api-key': fakes.mailgun.apiKey }],
  ] as const)
    await client.resource<Secret>(SECRETS).create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: NAMESPACE, name, labels: { ...MANAGED_BY } },
      stringData,
    });
}

export async function installChart(
  controller: string,
  fakes: ThirdParties,
  kubeconfig: string,
): Promise<void> {
  const args = ['install', controller, join(repoRoot, 'charts', controller), '--namespace', NAMESPACE];
  for (const [key, value] of Object.entries(chartValues(controller, fakes)))
    args.push('--set-json', `${key}=${JSON.stringify(value)}`);
  args.push('--wait', '--timeout', '3m');
  await helm(args, { kubeconfig, timeoutMs: 200_000 });
}

/** `--wait`: the pods are gone too when it returns, so the namespace is deleted at once afterwards. */
export async function uninstallChart(controller: string, kubeconfig: string): Promise<void> {
  await helm(
    ['uninstall', controller, '--namespace', NAMESPACE, '--ignore-not-found', '--wait', '--timeout', '90s'],
    {
      kubeconfig,
      timeoutMs: 100_000,
    },
  );
}

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
  status: { phase?: string; containerStatuses?: { name: string; restartCount: number }[] };
}

export interface ControllerPod {
  controller: string;
  pod: string;
  nodeName: string | undefined;
  image: string | undefined;
  phase: string | undefined;
  /** Of the controller container: a restart means the controller crashed (or failed its probe). */
  restarts: number;
}

/** The pods of a release, by the chart's `app.kubernetes.io/instance` label. */
export async function controllerPods(client: KubeClient, controller: string): Promise<ControllerPod[]> {
  const list = await client.resource<Pod>(PODS).list({
    namespace: NAMESPACE,
    labelSelector: `app.kubernetes.io/instance=${controller}`,
  });
  return list.items.map((pod) => ({
    controller,
    pod: pod.metadata.name,
    nodeName: pod.spec.nodeName,
    image: pod.spec.containers.find((c) => c.name === CONTROLLER_CONTAINER)?.image,
    phase: pod.status.phase,
    restarts: pod.status.containerStatuses?.find((c) => c.name === CONTROLLER_CONTAINER)?.restartCount ?? 0,
  }));
}

/** Which controller pod restarted, with the end of the log of its crashed container; else undefined. */
export async function restartedControllerPod(client: KubeClient): Promise<string | undefined> {
  for (const controller of RELEASES)
    for (const { pod, restarts } of await controllerPods(client, controller))
      if (restarts > 0) {
        const previous = await podLog(client, pod, CONTROLLER_CONTAINER, { previous: true, tailLines: 15 });
        return `${controller}'s pod ${pod} restarted (${restarts}); its crashed container's log ends with:\n${previous.trimEnd()}`;
      }
  return undefined;
}

/** Each controller pod's log into `<dir>/<pod>.log`: the cluster, and the logs with it, may be gone soon. */
export async function saveControllerLogs(client: KubeClient, dir: string): Promise<string[]> {
  const saved: string[] = [];
  for (const controller of RELEASES)
    for (const { pod } of await controllerPods(client, controller)) {
      const path = join(dir, `${pod}.log`);
      await writeFile(path, await podLog(client, pod, CONTROLLER_CONTAINER));
      saved.push(path);
    }
  return saved;
}
