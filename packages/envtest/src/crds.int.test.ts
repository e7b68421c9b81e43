/** applyCrds on the real API server: applied again without error, each served and discovered once it resolves. */
import { KubeTransport } from '@loopwright/client';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { applyCrds, readCrdDirectory, undiscovered, type GroupDiscoveryList } from './crds.ts';
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
      const transport = new KubeTransport(kc, { rateLimit: false });
      try {
        for (const plural of ['gadgets', 'gizmos']) {
          const list = await transport.requestJson<{ items: unknown[] }>({
            path: `/apis/crds.testing.loopwright.dev/v1/namespaces/default/${plural}`,
          });
          assert.deepEqual(list.items, []);
        }
        const discovery = await transport.requestJson<GroupDiscoveryList>({
          path: '/apis',
          headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' },
        });
        assert.deepEqual(
          crds.flatMap((c) => undiscovered(c, discovery)),
          [],
        );
      } finally {
        transport.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
