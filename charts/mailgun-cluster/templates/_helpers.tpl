{{/* Chart name, overridable. */}}
{{- define "mailgun-cluster.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<name>, or the release name when it already contains the chart name. */}}
{{- define "mailgun-cluster.fullname" -}}
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

{{- define "mailgun-cluster.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mailgun-cluster.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mailgun-cluster.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mailgun-cluster.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: controller
# Cluster API's provider label, on every component of this provider (clusterctl uses it).
cluster.x-k8s.io/provider: infrastructure-mailgun
{{- end }}

{{- define "mailgun-cluster.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mailgun-cluster.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "mailgun-cluster.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The Secret holding the Mailgun API key: an existing one, or the one this chart creates. */}}
{{- define "mailgun-cluster.secretName" -}}
{{- if .Values.mailgun.apiKey.existingSecret }}
{{- .Values.mailgun.apiKey.existingSecret }}
{{- else if .Values.mailgun.apiKey.create }}
{{- printf "%s-mailgun" (include "mailgun-cluster.fullname" .) }}
{{- else }}
{{- fail "set mailgun.apiKey.existingSecret (a Secret holding the Mailgun API key), or mailgun.apiKey.create=true with mailgun.apiKey.value" }}
{{- end }}
{{- end }}

{{/*
Exactly what packages/mailgun-cluster calls (charts/mailgun-cluster README, "RBAC"); the same list in
the ClusterRole (all namespaces) and in each per-namespace Role (watchNamespaces).
*/}}
{{- define "mailgun-cluster.rules" -}}
# Informers (list/watch) and the message-id annotation (merge patch of metadata).
- apiGroups: [infrastructure.cluster.x-k8s.io]
  resources: [mailgunclusters, mailgunmachines]
  verbs: [list, watch, patch]
# The send claim, the recorded id, conditions and contract fields (merge patch of status).
- apiGroups: [infrastructure.cluster.x-k8s.io]
  resources: [mailgunclusters/status, mailgunmachines/status]
  verbs: [patch]
# Owners and pause state, read from informer caches only.
- apiGroups: [cluster.x-k8s.io]
  resources: [clusters, machines]
  verbs: [list, watch]
# events.k8s.io/v1 Events: create, and patch for the runtime recorder's series counts of repeats.
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
