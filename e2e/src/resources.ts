/**
 * Every resource the e2e suites read or write, declared once: the typed handles of @loopwright/client
 * (`resource(kc, PODS)`) build the paths from these, so no suite writes an API path of its own.
 */
import { resourceName, type ObjectKey, type ResourceType } from '@loopwright/client';

const core = (plural: string, kind: string, namespaced: boolean): ResourceType => ({
  group: '',
  version: 'v1',
  plural,
  kind,
  namespaced,
});

export const NAMESPACES = core('namespaces', 'Namespace', false);
export const CONFIG_MAPS = core('configmaps', 'ConfigMap', true);
export const NODES = core('nodes', 'Node', false);
export const PODS = core('pods', 'Pod', true);
export const SECRETS = core('secrets', 'Secret', true);
export const SERVICES = core('services', 'Service', true);
export const SERVICE_ACCOUNTS = core('serviceaccounts', 'ServiceAccount', true);

export const DEPLOYMENTS: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  namespaced: true,
};
export const REPLICA_SETS: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'replicasets',
  kind: 'ReplicaSet',
  namespaced: true,
};
export const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
};
/** events.k8s.io/v1: the Events the controllers' recorders write. */
export const EVENTS: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};
export const ENDPOINT_SLICES: ResourceType = {
  group: 'discovery.k8s.io',
  version: 'v1',
  plural: 'endpointslices',
  kind: 'EndpointSlice',
  namespaced: true,
};
export const PRIORITY_CLASSES: ResourceType = {
  group: 'scheduling.k8s.io',
  version: 'v1',
  plural: 'priorityclasses',
  kind: 'PriorityClass',
  namespaced: false,
};
export const CUSTOM_RESOURCE_DEFINITIONS: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};
export const SELF_SUBJECT_RULES_REVIEWS: ResourceType = {
  group: 'authorization.k8s.io',
  version: 'v1',
  plural: 'selfsubjectrulesreviews',
  kind: 'SelfSubjectRulesReview',
  namespaced: false,
};

const rbac = (plural: string, kind: string, namespaced: boolean): ResourceType => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural,
  kind,
  namespaced,
});

export const ROLES = rbac('roles', 'Role', true);
export const ROLE_BINDINGS = rbac('rolebindings', 'RoleBinding', true);
export const CLUSTER_ROLES = rbac('clusterroles', 'ClusterRole', false);
export const CLUSTER_ROLE_BINDINGS = rbac('clusterrolebindings', 'ClusterRoleBinding', false);

/** at-scheduler's CRD. */
export const ATS: ResourceType = {
  group: 'cnat.programming-kubernetes.info',
  version: 'v1alpha1',
  plural: 'ats',
  kind: 'At',
  namespaced: true,
};
/** mailgun-cluster's CRD. */
export const MAILGUN_CLUSTERS: ResourceType = {
  group: 'infrastructure.cluster.x-k8s.io',
  version: 'v1alpha1',
  plural: 'mailgunclusters',
  kind: 'MailgunCluster',
  namespaced: true,
};
/** Cluster API's Cluster, in the version mailgun-cluster watches. */
export const CLUSTERS: ResourceType = {
  group: 'cluster.x-k8s.io',
  version: 'v1beta2',
  plural: 'clusters',
  kind: 'Cluster',
  namespaced: true,
};
/** clusterctl's inventory of the providers it installed. */
export const CLUSTERCTL_PROVIDERS: ResourceType = {
  group: 'clusterctl.cluster.x-k8s.io',
  version: 'v1alpha3',
  plural: 'providers',
  kind: 'Provider',
  namespaced: true,
};

/** One object: its resource and its key. What the uninstall tests check is gone, or left. */
export interface ObjectRef {
  type: ResourceType;
  key: ObjectKey;
}

/** `roles.rbac.authorization.k8s.io loopwright/at-scheduler`: an object as an assertion names it. */
export function describeObject({ type, key }: ObjectRef): string {
  return `${resourceName(type)} ${key.namespace === undefined ? '' : `${key.namespace}/`}${key.name}`;
}

/** The object `name` of `type`, in `namespace` when the resource is namespaced. */
export function ref(type: ResourceType, name: string, namespace?: string): ObjectRef {
  return { type, key: namespace === undefined ? { name } : { namespace, name } };
}
