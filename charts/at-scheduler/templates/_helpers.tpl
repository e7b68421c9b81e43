{{/* Chart name, overridable. */}}
{{- define "at-scheduler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<name>, or the release name when it already contains the chart name. */}}
{{- define "at-scheduler.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "at-scheduler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "at-scheduler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "at-scheduler.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "at-scheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: controller
{{- end }}

{{- define "at-scheduler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "at-scheduler.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "at-scheduler.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

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
# or when a create hits an existing name; create: the command's pod; delete: ttlSecondsAfterFinished.
- apiGroups: ['']
  resources: [pods]
  verbs: [get, list, watch, create, delete]
# events.k8s.io/v1 Events: create, and patch for the recorder's series counts of repeated events.
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
