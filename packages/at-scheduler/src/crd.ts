/**
 * The At CRD as the chart ships it (charts/at-scheduler/crds), for tests and the benchmark.
 * The controller itself never installs it: CRDs are cluster-scoped and belong to the chart.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const crdPath = fileURLToPath(
  new URL('../../../charts/at-scheduler/crds/ats.cnat.programming-kubernetes.info.yaml', import.meta.url),
);

/** The parts of a CustomResourceDefinition this package reads. */
export interface AtCrd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; plural: string; shortNames?: string[] };
    versions: {
      name: string;
      schema: { openAPIV3Schema: Record<string, unknown> };
      additionalPrinterColumns?: { name: string; jsonPath: string }[];
    }[];
  };
}

export function loadAtCrd(): AtCrd {
  return parse(readFileSync(crdPath, 'utf8')) as AtCrd;
}

/** Minimal client surface for {@link installCrd} (a runtime `KubeClient` fits). */
export interface JsonRequester {
  requestJson<T>(
    method: string,
    path: string,
    options?: { body?: unknown; contentType?: string },
  ): Promise<T>;
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/**
 * Creates or replaces `crd` and waits until it is Established (its API is served). Tests and the
 * benchmark only; in clusters the chart installs it.
 */
export async function installCrd(
  client: JsonRequester,
  crd: AtCrd = loadAtCrd(),
  timeoutMs = 30_000,
): Promise<void> {
  const path = `${CRDS}/${crd.metadata.name}`;
  try {
    await client.requestJson('POST', CRDS, { body: crd });
  } catch (error) {
    if ((error as { reason?: string }).reason !== 'AlreadyExists') throw error;
    const current = await client.requestJson<{ metadata: { resourceVersion: string } }>('GET', path);
    await client.requestJson('PUT', path, {
      body: { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata.resourceVersion } },
    });
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await client.requestJson<{
      status?: { conditions?: { type: string; status: string }[] };
    }>('GET', path);
    if (current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline)
      throw new Error(`CRD ${crd.metadata.name} not established within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
