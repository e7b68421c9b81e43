{{/*
Names and labels. Each takes the controller chart's root context (`.`), except `labels`, which takes
the context every object template gets: (dict "top" . "controller" $controller).
*/}}

{{/* Chart name, overridable. */}}
{{- define "loopwright-controller.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<name>, or the release name when it already contains the chart name. */}}
{{- define "loopwright-controller.fullname" -}}
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

{{- define "loopwright-controller.selectorLabels" -}}
app.kubernetes.io/name: {{ include "loopwright-controller.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The labels of every object: the standard ones, the chart's own (controller.labels), commonLabels. */}}
{{- define "loopwright-controller.labels" -}}
{{- $top := .top -}}
helm.sh/chart: {{ printf "%s-%s" $top.Chart.Name $top.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "loopwright-controller.selectorLabels" $top }}
app.kubernetes.io/version: {{ $top.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $top.Release.Service }}
app.kubernetes.io/component: controller
{{- with .controller.labels }}
{{ toYaml . }}
{{- end }}
{{- with $top.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "loopwright-controller.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "loopwright-controller.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "loopwright-controller.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The resources of the chart's crds/ directory as the API serves them: "<group>/<version>/<plural>" for
each served version, comma-separated (the helm test looks each up in discovery).
*/}}
{{- define "loopwright-controller.crdResources" -}}
{{- $resources := list }}
{{- range $path, $_ := .Files.Glob "crds/*.yaml" }}
{{- $crd := $.Files.Get $path | fromYaml }}
{{- range $crd.spec.versions }}
{{- if .served }}
{{- $resources = append $resources (printf "%s/%s/%s" $crd.spec.group .name $crd.spec.names.plural) }}
{{- end }}
{{- end }}
{{- end }}
{{- join "," $resources }}
{{- end }}

{{/*
Sharding: offered by a controller chart whose values have a `sharding` key (as watchNamespaces, the
key is the opt-in: a chart whose program has no --sharding has no such value, and its schema rejects
one). "true" (non-empty) when it is offered and enabled. Takes the chart's root context.
*/}}
{{- define "loopwright-controller.sharding" -}}
{{- if and (hasKey .Values "sharding") .Values.sharding.enabled }}true{{ end }}
{{- end }}

{{/* The ring of the member Leases: sharding.ring, else the full name (one ring per release). */}}
{{- define "loopwright-controller.shardingRing" -}}
{{- .Values.sharding.ring | default (include "loopwright-controller.fullname" .) }}
{{- end }}
