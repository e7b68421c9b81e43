/**
 * Every resource the demo (and its test) reads or writes, declared once: the client's typed handles
 * (`client.resource<At>(ATS)`) build the paths from these.
 */
import type { ResourceType } from '@loopwright/runtime';

const core = (plural: string, kind: string, namespaced: boolean): ResourceType => ({
  group: '',
  version: 'v1',
  plural,
  kind,
  namespaced,
});

export const NAMESPACES = core('namespaces', 'Namespace', false);
export const NODES = core('nodes', 'Node', false);
export const PODS = core('pods', 'Pod', true);
export const SECRETS = core('secrets', 'Secret', true);
export const SERVICE_ACCOUNTS = core('serviceaccounts', 'ServiceAccount', true);
/** core/v1 Events, as `kubectl get events` lists them (by `involvedObject`). */
export const EVENTS = core('events', 'Event', true);

export const DEPLOYMENTS: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  namespaced: true,
};
export const CUSTOM_RESOURCE_DEFINITIONS: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};
export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
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

/** at-scheduler's At. */
export const ATS: ResourceType = {
  group: 'cnat.programming-kubernetes.info',
  version: 'v1alpha1',
  plural: 'ats',
  kind: 'At',
  namespaced: true,
};
/** mailgun-cluster's MailgunCluster. */
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
