/**
 * The samples of a controller without a scenario of its own: `packages/<name>/samples/*.yaml`, objects of
 * its own kinds, applied into the demo's namespace (or cluster-wide, for a cluster-scoped kind) and
 * watched until their `Ready` condition is True.
 */
import { isAlreadyExists, isNotFound, type KubeClient } from '@loopwright/runtime';
import { readCrdFiles, sortedYamlFiles } from '@loopwright/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { MANAGED_BY, NAMESPACE } from './names.ts';
import { CONTROLLERS, SCENARIOS } from './workspace.ts';

interface Sample {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
}

export interface CrdNames {
  spec: { group: string; scope: 'Namespaced' | 'Cluster'; names: { kind: string; plural: string } };
}

/** A sample as applied: its kind and name (the table's row) and where to read it. */
export interface AppliedSample {
  kind: string;
  name: string;
  path: string;
  namespaced: boolean;
}

/** Where `sample` lives, from the CRD that defines its kind; throws when none of `crds` does. */
export function samplePath(sample: Sample, crds: readonly CrdNames[]): { path: string; namespaced: boolean } {
  const [group, version] = sample.apiVersion.split('/');
  const crd = crds.find(({ spec }) => spec.group === group && spec.names.kind === sample.kind);
  if (!crd || version === undefined)
    throw new Error(`${sample.apiVersion} ${sample.kind} is not a kind of the controller's CRDs`);
  const namespaced = crd.spec.scope === 'Namespaced';
  const scope = namespaced ? `namespaces/${NAMESPACE}/` : '';
  return {
    path: `/apis/${group}/${version}/${scope}${crd.spec.names.plural}/${sample.metadata.name}`,
    namespaced,
  };
}

/** Creates every sample of the controllers without a scenario, labelled as the demo's. */
export async function applyGenericSamples(client: KubeClient): Promise<AppliedSample[]> {
  const applied: AppliedSample[] = [];
  for (const controller of CONTROLLERS.filter(({ name }) => !SCENARIOS.includes(name))) {
    const crds = readCrdFiles<CrdNames>(controller.crdFiles);
    for (const file of sortedYamlFiles(join(controller.packageDir, 'samples'))) {
      const sample = parse(readFileSync(file, 'utf8')) as Sample;
      const { path, namespaced } = samplePath(sample, crds);
      const body = {
        ...sample,
        metadata: { ...sample.metadata, labels: { ...sample.metadata.labels, ...MANAGED_BY } },
      };
      const collection = path.slice(0, path.lastIndexOf('/'));
      try {
        await client.requestJson('POST', collection, { body });
      } catch (error) {
        // A cluster-scoped sample outlives the namespace: the one of an earlier run that was killed.
        if (namespaced || !isAlreadyExists(error)) throw error;
        const existing = await client.requestJson<Sample>('GET', path);
        if (!Object.entries(MANAGED_BY).every(([key, value]) => existing.metadata.labels?.[key] === value))
          throw new Error(`${sample.kind} ${sample.metadata.name} exists and was not created by the demo`, {
            cause: error,
          });
        await client.requestJson('DELETE', path);
        await client.requestJson('POST', collection, { body });
      }
      applied.push({ kind: sample.kind, name: sample.metadata.name, path, namespaced });
    }
  }
  return applied;
}

/** Deletes the cluster-scoped samples (the namespaced ones go with the demo's namespace). */
export async function deleteClusterScopedSamples(client: KubeClient, samples: readonly AppliedSample[]) {
  for (const { path } of samples.filter(({ namespaced }) => !namespaced))
    await client.requestJson('DELETE', path).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
}
