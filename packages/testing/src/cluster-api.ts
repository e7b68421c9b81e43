/**
 * Stand-ins for Cluster API core's CRDs, for tests and the demo on an API server without Cluster API:
 * `clusters`/`machines.cluster.x-k8s.io` served at v1beta2, schema-less (every field preserved) with a
 * status subresource. Enough for an infrastructure provider's owner lookups, pause and watches; no
 * validation, no defaulting, no Cluster API controllers.
 */
export const CLUSTER_API_GROUP = 'cluster.x-k8s.io';
export const CLUSTER_API_VERSION = 'v1beta2';

export type ClusterApiKind = 'Cluster' | 'Machine';

/** The CRD's name, e.g. `clusters.cluster.x-k8s.io`. */
export function clusterApiCrdName(kind: ClusterApiKind): string {
  return `${kind.toLowerCase()}s.${CLUSTER_API_GROUP}`;
}

/** The stand-in CRD in its wire form (JSON field names), ready to POST. */
export function clusterApiStandInCrd(
  kind: ClusterApiKind,
  labels: Readonly<Record<string, string>> = {},
): {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: object;
} {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: clusterApiCrdName(kind), labels: { ...labels } },
    spec: {
      group: CLUSTER_API_GROUP,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: CLUSTER_API_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}
