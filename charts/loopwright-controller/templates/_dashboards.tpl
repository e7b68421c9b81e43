{{/*
The Grafana dashboards (dashboards.enabled): one ConfigMap holding every file of the controller chart's
dashboards/ directory under its file name, labelled for the Grafana sidecar (kiwigrid k8s-sidecar, as
kube-prometheus-stack and the Grafana chart run it), which loads every ConfigMap carrying its label.
Nothing is rendered while the directory has no dashboard.
*/}}
{{- define "loopwright-controller.dashboards" -}}
{{- $top := .top }}
{{- with $top.Values.dashboards }}
{{- $files := $top.Files.Glob "dashboards/*.json" }}
{{- if and .enabled $files }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "loopwright-controller.fullname" $top }}-dashboards
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "loopwright-controller.labels" $ | nindent 4 }}
    {{ .label }}: {{ .labelValue | quote }}
  {{- with .annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
data:
  {{- $files.AsConfig | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}
