/**
 * The charts' Artifact Hub annotations against the real API server: `artifacthub.io/crds` lists exactly
 * the chart's CRDs, and every `artifacthub.io/crdsExamples` object is one the API server accepts for
 * them, with strict field validation (a misspelt field is refused, not pruned): what users copy from
 * the chart's Artifact Hub page must work.
 */
import { KubeApiError, KubeClient, type ResourceType } from '@loopwright/client';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { applyCrds, loadTestKubeConfig, readCrdFiles } from '@loopwright/envtest';
import { workspaceControllers } from './workspace/controllers.ts';

interface Example {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
}

/** The CRD fields read here. */
interface ChartCrd {
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; plural: string };
    scope: string;
    versions: { name: string; served: boolean; storage: boolean }[];
  };
}

const kc = loadTestKubeConfig();
const client = new KubeClient(kc, { rateLimit: false });
after(() => client.close());

/** The example's resource, from the CRD that defines its kind. */
function resourceOf(example: Example, crds: readonly ChartCrd[]): ResourceType {
  const [group = '', version = ''] = example.apiVersion.split('/');
  const crd = crds
    .map((c) => c.spec)
    .find((spec) => spec.group === group && spec.names.kind === example.kind);
  assert.ok(crd, `${example.kind} (${example.apiVersion}) is not a kind of the chart's CRDs`);
  assert.ok(
    crd.versions.some((v) => v.name === version && v.served),
    `${example.apiVersion} is not a served version`,
  );
  return {
    group,
    version,
    plural: crd.names.plural,
    kind: example.kind,
    namespaced: crd.scope === 'Namespaced',
  };
}

/** A server-side dry-run create with strict field validation; throws the API server's refusal. */
async function dryRunCreate(example: Example, crds: readonly ChartCrd[]): Promise<void> {
  const type = resourceOf(example, crds);
  // An example names no namespace (the user's is whatever kubectl's context says): `default` here.
  const object = type.namespaced
    ? { ...example, metadata: { ...example.metadata, namespace: 'default' } }
    : example;
  await client.resource(type).create(object, { dryRun: true, fieldValidation: 'Strict' });
}

for (const controller of workspaceControllers()) {
  describe(`${controller.name} chart: Artifact Hub annotations`, () => {
    const chart = parse(readFileSync(join(controller.chartDir, 'Chart.yaml'), 'utf8')) as {
      annotations?: Record<string, string>;
    };
    const annotation = (key: string): unknown => {
      const text = chart.annotations?.[key];
      return text === undefined ? undefined : parse(text);
    };
    const crds = readCrdFiles<ChartCrd>(controller.crdFiles);

    before(() => applyCrds(kc, crds, { fieldManager: 'artifacthub-test' }));

    test('artifacthub.io/crds lists exactly the chart’s CRDs, by name, kind and storage version', () => {
      const listed = (annotation('artifacthub.io/crds') ?? []) as {
        name: string;
        kind: string;
        version: string;
      }[];
      assert.deepEqual(
        listed.map(({ name, kind, version }) => ({ name, kind, version })),
        crds.map((crd) => ({
          name: crd.metadata.name,
          kind: crd.spec.names.kind,
          version: crd.spec.versions.find((v) => v.storage)?.name,
        })),
      );
    });

    test('every crdsExample is accepted by the API server (strict), one per kind at least', async () => {
      const examples = (annotation('artifacthub.io/crdsExamples') ?? []) as Example[];
      assert.deepEqual(
        [...new Set(examples.map((e) => e.kind))].sort(),
        crds.map((crd) => crd.spec.names.kind).sort(),
      );
      for (const example of examples) await dryRunCreate(example, crds);
    });

    if (crds.length > 0)
      test('an example with a misspelt field is refused: the check above can fail', async () => {
        const [example] = (annotation('artifacthub.io/crdsExamples') ?? []) as Example[];
        assert.ok(example);
        await assert.rejects(
          dryRunCreate({ ...example, spec: { ...example.spec, notAField: true } }, crds),
          (error: unknown) => error instanceof KubeApiError && /notAField/.test(error.message),
        );
      });
  });
}
