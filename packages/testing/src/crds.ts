/**
 * CustomResourceDefinitions for tests: server-side applied (force, under the caller's field manager, so
 * every test file of a run may apply the same ones again and concurrent callers converge), then waited
 * for until each is Established (its API served). In clusters, charts install them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeTransport } from '@loopwright/core';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { eventually } from './kube.ts';
import { sortedYamlFiles } from './workspace/controllers.ts';

/** What is read of a CRD here; every other field is sent as it is. */
export interface Crd {
  metadata: { name: string };
}

export interface ApplyCrdsOptions {
  fieldManager: string;
  /** How long each CRD may take to become Established. Default 30 s. */
  timeoutMs?: number;
}

const crdPath = (name: string): string => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;

/** Applies `crds` in order, then waits until every one is Established. */
export async function applyCrds(
  kubeConfig: KubeConfig,
  crds: readonly Crd[],
  options: ApplyCrdsOptions,
): Promise<void> {
  const transport = new KubeTransport(kubeConfig, { rateLimit: false, userAgent: options.fieldManager });
  try {
    for (const crd of crds)
      await transport.requestJson({
        method: 'PATCH',
        path: `${crdPath(crd.metadata.name)}?fieldManager=${encodeURIComponent(options.fieldManager)}&force=true`,
        contentType: 'application/apply-patch+yaml',
        body: crd,
      });
    for (const crd of crds)
      await eventually(
        async () => {
          const { status } = await transport.requestJson<{
            status?: { conditions?: { type: string; status: string }[] };
          }>({ path: crdPath(crd.metadata.name) });
          if (!status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'))
            throw new Error(`CRD ${crd.metadata.name} is not Established`);
        },
        { timeoutMs: options.timeoutMs ?? 30_000 },
      );
  } finally {
    transport.close();
  }
}

/** The CRDs of a chart's `crds/` directory (its `*.yaml` files, sorted by name). */
export function readCrdDirectory(dir: string): Crd[] {
  return readCrdFiles(sortedYamlFiles(dir));
}

/**
 * The CRDs of these files, one per file, in their order (a workspace controller's `crdFiles`); `T` names
 * the fields the caller reads (the files are the charts' own, not checked against it).
 */
export function readCrdFiles<T = Crd>(files: readonly string[]): T[] {
  return files.map((file) => parse(readFileSync(file, 'utf8')) as T);
}
