{{/*
The rules of exactly what packages/at-scheduler calls (its README, "RBAC"); the same list in the
ClusterRole (all namespaces) and in each per-namespace Role (watchNamespaces).
*/}}
{{- define "at-scheduler.rules" -}}
# The At informer (list + watch) and nothing else on the main resource: the controller never
# writes spec or metadata.
- apiGroups: [cnat.programming-kubernetes.info]
  resources: [ats]
  verbs: [list, watch]
# Status is written only by merge patches to the status subresource.
- apiGroups: [cnat.programming-kubernetes.info]
  resources: [ats/status]
  verbs: [patch]
# The pod's controller ownerReference sets blockOwnerDeletion (foreground deletion of an At waits for
# its pod); where the OwnerReferencesPermissionEnforcement admission plugin runs (OpenShift, hardened
# clusters), that needs update on the owner's finalizers, or every pod create is refused.
- apiGroups: [cnat.programming-kubernetes.info]
  resources: [ats/finalizers]
  verbs: [update]
# list/watch: the label-selected pod informer; get: the live lookup before concluding a pod is gone
# or when a create hits an existing name; create: the command's pod; delete: ttlSecondsAfterFinished;
# patch: removing the pod's outcome finalizer once the At recorded how it ended.
- apiGroups: ['']
  resources: [pods]
  verbs: [get, list, watch, create, delete, patch]
# events.k8s.io/v1 Events: create, and patch for the recorder's series counts of repeated events.
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}

{{- define "at-scheduler.env" -}}
- name: DEFAULT_IMAGE
  value: {{ .Values.defaultImage | quote }}
{{- end }}
