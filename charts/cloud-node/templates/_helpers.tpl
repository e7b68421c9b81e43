{{/* Chart name, overridable. */}}
{{- define "cloud-node.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<name>, or the release name when it already contains the chart name. */}}
{{- define "cloud-node.fullname" -}}
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

{{- define "cloud-node.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cloud-node.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "cloud-node.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "cloud-node.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: controller
{{- end }}

{{- define "cloud-node.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "cloud-node.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "cloud-node.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* True (non-empty) when this chart creates the token's Secret from values. */}}
{{- define "cloud-node.createSecret" -}}
{{- if and .Values.hcloud.token.create (not .Values.hcloud.token.existingSecret) }}true{{ end }}
{{- end }}

{{/* The Secret holding the Hetzner Cloud API token (and optionally the network): an existing one, or the one this chart creates. */}}
{{- define "cloud-node.secretName" -}}
{{- if .Values.hcloud.token.existingSecret }}
{{- .Values.hcloud.token.existingSecret }}
{{- else if .Values.hcloud.token.create }}
{{- printf "%s-hcloud" (include "cloud-node.fullname" .) }}
{{- else }}
{{- fail "set hcloud.token.existingSecret (a Secret holding the Hetzner Cloud API token, e.g. HCCM's `hcloud`), or hcloud.token.create=true with hcloud.token.value" }}
{{- end }}
{{- end }}

{{/*
Exactly what packages/cloud-node calls on Nodes (charts/cloud-node README, "RBAC"). Nodes are
cluster-scoped, so only a ClusterRole can grant this.
*/}}
{{- define "cloud-node.rules" -}}
# list/watch: the Node informer of both controllers; get: the fresh read after a 409 Conflict; patch:
# providerID, labels and taints (merge patches, never `update`); delete: a Node whose server is confirmed
# gone (with uid/resourceVersion preconditions).
- apiGroups: ['']
  resources: [nodes]
  verbs: [get, list, watch, patch, delete]
# status.addresses, by merge patch of the status subresource.
- apiGroups: ['']
  resources: [nodes/status]
  verbs: [patch]
{{- end }}
