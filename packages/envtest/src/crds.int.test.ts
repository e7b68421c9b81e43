/** applyCrds on the real API server: applied again without error, each served and discovered once it resolves. */
import { KubeClient } from '@loopwright/client';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { applyCrds, readCrdDirectory, readDiscovery, undiscovered } from './crds.ts';
import { loadTestKubeConfig } from './kube.ts';

const crd = (plural: string, kind: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.crds.testing.loopwright.dev` },
  spec: {
    group: 'crds.testing.loopwright.dev',
    scope: 'Namespaced',
    names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
});

describe('applyCrds', () => {
  it("applies a chart's crds/ (again without error) and resolves once every kind is served and discovered", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crds-'));
    try {
      await writeFile(join(dir, 'b.yaml'), stringify(crd('gizmos', 'Gizmo')));
      await writeFile(join(dir, 'a.yaml'), stringify(crd('gadgets', 'Gadget')));
      await writeFile(join(dir, 'notes.txt'), 'not a CRD');
      const crds = readCrdDirectory(dir);
      assert.deepEqual(
        crds.map((c) => c.metadata.name),
        ['gadgets.crds.testing.loopwright.dev', 'gizmos.crds.testing.loopwright.dev'],
      );
      const kc = loadTestKubeConfig();
      for (let round = 0; round < 2; round++) await applyCrds(kc, crds, { fieldManager: 'crds-test' });
      const client = new KubeClient(kc, { rateLimit: false });
      try {
        for (const [plural, kind] of [
          ['gadgets', 'Gadget'],
          ['gizmos', 'Gizmo'],
        ] as const) {
          const resource = client.resource({
            group: 'crds.testing.loopwright.dev',
            version: 'v1',
            plural,
            kind,
            namespaced: true,
          });
          assert.deepEqual((await resource.list({ namespace: 'default' })).items, []);
        }
        const discovery = await readDiscovery(client);
        assert.deepEqual(
          crds.flatMap((c) => undiscovered(c, discovery)),
          [],
        );
      } finally {
        await client.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
