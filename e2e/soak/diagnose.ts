/**
 * What the soak prints when an At is not done at the end: the At and its pod as the API server has them,
 * and as each at-scheduler replica's cache holds them (their resourceVersions, from the cache dump), so
 * that a pod that never finished, a controller that did not act and a cache that missed an event are
 * told apart.
 */
import type { KubeObject } from '@loopwright/client';
import { resource } from '../src/kube.ts';
import { ATS, PODS } from '../src/resources.ts';
import type { ChaosEnvironment } from '../chaos/environment.ts';
import type { Load } from '../chaos/load.ts';
import { cacheDumpOf, replicasOf } from '../chaos/replicas.ts';

interface At extends KubeObject {
  metadata: { name: string; resourceVersion: string };
  status?: { phase?: string; podName?: string };
}

interface Pod extends KubeObject {
  metadata: { resourceVersion: string };
  status?: { phase?: string; containerStatuses?: { state?: object }[] };
}

export async function describeUnfinishedAts(env: ChaosEnvironment, load: Load): Promise<string[]> {
  const namespace = env.work.name;
  const atScheduler = env.controllers.find((controller) => controller.name === 'at-scheduler');
  const caches = atScheduler
    ? await Promise.all(
        (await replicasOf(env.admin, atScheduler)).map(async (replica) => ({
          replica: replica.name,
          scopes: await cacheDumpOf(replica).catch(() => []),
        })),
      )
    : [];
  const cached = (plural: string, key: string) =>
    caches
      .map(({ replica, scopes }) => {
        const version = scopes.find((scope) => scope.plural === plural)?.objects[key];
        return `${replica.split('-').at(-1) ?? ''} ${version ?? 'absent'}`;
      })
      .join(', ');
  const lines: string[] = [];
  for (const { name } of load.ats) {
    const at = await resource<At>(env.admin, ATS).getOptional({ namespace, name });
    if (!at || at.status?.phase === 'DONE') continue;
    const podName = at.status?.podName;
    const pod = podName
      ? await resource<Pod>(env.admin, PODS).getOptional({ namespace, name: podName })
      : undefined;
    lines.push(
      `At ${name}: ${at.status?.phase ?? 'no phase'} at ${at.metadata.resourceVersion} ` +
        `(cached: ${cached('ats', `${namespace}/${name}`)}); ` +
        (pod
          ? `pod ${podName ?? ''} ${pod.status?.phase ?? ''} at ${pod.metadata.resourceVersion} ` +
            `${JSON.stringify(pod.status?.containerStatuses?.map((status) => status.state))} ` +
            `(cached: ${cached('pods', `${namespace}/${podName ?? ''}`)})`
          : `no pod ${podName ?? ''}`),
    );
  }
  return lines;
}
