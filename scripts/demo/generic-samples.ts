/**
 * The samples of a controller without a scenario of its own: `packages/<name>/samples/*.yaml`, objects of
 * its own kinds, applied into the demo's namespace (or cluster-wide, for a cluster-scoped kind) and
 * watched until their `Ready` condition is True.
 */
import {
  isAlreadyExists,
  type KubeClient,
  type KubeObject,
  type ObjectKey,
  type ResourceType,
} from '@loopwright/runtime';
import { readCrdFiles, sortedYamlFiles } from '@loopwright/envtest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { MANAGED_BY, NAMESPACE } from './names.ts';
import { CONTROLLERS, SCENARIOS } from './workspace.ts';

interface Sample extends KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { namespace?: string; name: string; labels?: Record<string, string> };
}

export interface CrdNames {
  spec: { group: string; scope: 'Namespaced' | 'Cluster'; names: { kind: string; plural: string } };
}

/** Where a sample lives: its resource (from its kind's CRD) and its key. */
export interface SamplePlace {
  type: ResourceType;
  key: ObjectKey;
}

/** A sample as applied: its kind and name (the table's row) and where to read it. */
export interface AppliedSample extends SamplePlace {
  kind: string;
  name: string;
}

/**
 * Where `sample` lives, from the CRD that defines its kind: the demo's namespace for a namespaced kind,
 * the cluster's level otherwise. Throws when none of `crds` defines the kind.
 */
export function samplePlace(sample: Sample, crds: readonly CrdNames[]): SamplePlace {
  const [group, version] = sample.apiVersion.split('/');
  const crd = crds.find(({ spec }) => spec.group === group && spec.names.kind === sample.kind);
  if (!crd || group === undefined || version === undefined)
    throw new Error(`${sample.apiVersion} ${sample.kind} is not a kind of the controller's CRDs`);
  const namespaced = crd.spec.scope === 'Namespaced';
  const { kind, plural } = crd.spec.names;
  const { name } = sample.metadata;
  return {
    type: { group, version, plural, kind, namespaced },
    key: namespaced ? { namespace: NAMESPACE, name } : { name },
  };
}

/** Creates every sample of the controllers without a scenario, labelled as the demo's. */
export async function applyGenericSamples(client: KubeClient): Promise<AppliedSample[]> {
  const applied: AppliedSample[] = [];
  for (const controller of CONTROLLERS.filter(({ name }) => !SCENARIOS.includes(name))) {
    const crds = readCrdFiles<CrdNames>(controller.crdFiles);
    for (const file of sortedYamlFiles(join(controller.packageDir, 'samples'))) {
      const sample = parse(readFileSync(file, 'utf8')) as Sample;
      const { type, key } = samplePlace(sample, crds);
      const resource = client.resource<Sample>(type);
      const body = {
        ...sample,
        metadata: { ...sample.metadata, ...key, labels: { ...sample.metadata.labels, ...MANAGED_BY } },
      };
      try {
        await resource.create(body);
      } catch (error) {
        // A cluster-scoped sample outlives the namespace: the one of an earlier run that was killed.
        if (type.namespaced || !isAlreadyExists(error)) throw error;
        const existing = await resource.get(key);
        if (
          !Object.entries(MANAGED_BY).every(([label, value]) => existing.metadata.labels?.[label] === value)
        )
          throw new Error(`${sample.kind} ${sample.metadata.name} exists and was not created by the demo`, {
            cause: error,
          });
        await resource.delete(key);
        await resource.create(body);
      }
      applied.push({ kind: sample.kind, name: sample.metadata.name, type, key });
    }
  }
  return applied;
}

/** Deletes the cluster-scoped samples (the namespaced ones go with the demo's namespace). */
export async function deleteClusterScopedSamples(client: KubeClient, samples: readonly AppliedSample[]) {
  // `delete` resolves false for a sample that is gone.
  for (const { type, key } of samples.filter(({ type }) => !type.namespaced))
    await client.resource(type).delete(key);
}
