/**
 * The pods of buildPod written in protobuf, against a real API server: each must be stored exactly as
 * the same pod written as JSON. So the schema has every field buildPod writes, each under its number,
 * with false kept and quantities read alike.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isAlreadyExists, type KubeObject, type Resource } from '@loopwright/client';
import { createTestNamespace, loadTestKubeConfig, type TestNamespace } from '@loopwright/envtest';
import { KubeClient } from '@loopwright/runtime';
import { kubeAtApi } from './api.ts';
import type { AtSpec } from './generated/types.ts';
import { buildPod } from './pod.ts';
import { POD_RESOURCE, type Pod } from './resource.ts';
import { ownedByConfigMap } from './pod.test-support.ts';

let client: KubeClient;
let pods: Resource<Pod>;
let ns: TestNamespace;
let ownerUid: string;

before(async () => {
  const kc = loadTestKubeConfig();
  client = new KubeClient(kc, { rateLimit: false });
  pods = client.resource<Pod>(POD_RESOURCE);
  ns = await createTestNamespace(kc, 'at-pod-protobuf');
  const configMaps = client.resource<KubeObject>({
    ...POD_RESOURCE,
    plural: 'configmaps',
    kind: 'ConfigMap',
  });
  const owner = await configMaps.create({ metadata: { namespace: ns.name, name: 'owner' } });
  ownerUid = owner.metadata?.uid ?? '';
});
after(async () => {
  await ns.cleanup();
  await client.close();
});

/** Ats whose pods differ in every way buildPod lets an At choose. */
const specs: Record<string, AtSpec> = {
  defaults: { schedule: '2026-11-25T10:00:00Z', command: 'echo "hello, wörld" && exit 3' },
  chosen: {
    schedule: '2026-11-25T10:00:00Z',
    command: "printf '%s\\n' a | tr a b",
    image: 'registry.example:5000/tools/busybox:1.37.0',
    resources: {
      requests: { cpu: 0.5, memory: '32Mi', 'ephemeral-storage': '1Gi' },
      limits: { cpu: '1', memory: 67108864, 'example.com/dongle': 2 },
    },
  },
};

function podOf(name: string, spec: AtSpec): Pod {
  const at = { metadata: { name: `at-${name}`, namespace: ns.name, uid: ownerUid }, spec };
  return ownedByConfigMap(buildPod(at, name, { defaultImage: 'busybox:1.37.0' }), 'owner', ownerUid);
}

async function stored(name: string): Promise<Pod> {
  return pods.get({ namespace: ns.name, name });
}

describe("the protobuf pod create (kubeAtApi's createPod)", () => {
  for (const [key, spec] of Object.entries(specs)) {
    it(`stores the pod of an At with ${key} as JSON stores it`, async () => {
      await kubeAtApi(client).createPod(podOf(`proto-${key}`, spec));
      await pods.create(podOf(`json-${key}`, spec));
      const [proto, json] = await Promise.all([stored(`proto-${key}`), stored(`json-${key}`)]);
      // The name is in the at-name label and the command: each pod is compared as the other would be.
      const renamed = JSON.parse(JSON.stringify(proto).replaceAll(`proto-${key}`, `json-${key}`)) as Pod;
      assert.deepEqual(renamed.metadata?.labels, json.metadata?.labels);
      assert.deepEqual(renamed.metadata?.ownerReferences, json.metadata?.ownerReferences);
      assert.deepEqual(renamed.spec, json.spec);
      // And what JSON stores is what buildPod wrote (false is not left to the server's default).
      const written = podOf(`proto-${key}`, spec).spec as Record<string, unknown>;
      const spec_ = proto.spec as Record<string, unknown>;
      assert.equal(spec_.automountServiceAccountToken, false);
      assert.equal(spec_.enableServiceLinks, false);
      assert.deepEqual(spec_.securityContext, written.securityContext);
    });
  }

  it('is refused with AlreadyExists when the name is taken, as the reconciler expects', async () => {
    const pod = podOf('taken', specs.defaults as AtSpec);
    const api = kubeAtApi(client);
    await api.createPod(pod);
    const error: unknown = await api.createPod(pod).then(
      () => assert.fail('the second create succeeded'),
      (e: unknown) => e,
    );
    assert.equal(isAlreadyExists(error), true, String(error));
  });
});
