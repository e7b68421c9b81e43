/**
 * The At CRD as the chart ships it (charts/at-scheduler/crds), for tests and the benchmark, which install
 * it with `applyCrds` of @loopwright/envtest. The controller itself never installs it: CRDs are
 * cluster-scoped and belong to the chart.
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
      served: boolean;
      schema: { openAPIV3Schema: Record<string, unknown> };
      additionalPrinterColumns?: { name: string; jsonPath: string }[];
    }[];
  };
}

export function loadAtCrd(): AtCrd {
  return parse(readFileSync(crdPath, 'utf8')) as AtCrd;
}
