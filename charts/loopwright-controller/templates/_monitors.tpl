{{- define "loopwright-controller.serviceMonitor" -}}
{{- $top := .top }}
{{- with $top.Values.serviceMonitor }}
{{- if .enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "loopwright-controller.fullname" $top }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "loopwright-controller.labels" $ | nindent 4 }}
    {{- with .labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "loopwright-controller.selectorLabels" $top | nindent 6 }}
  namespaceSelector:
    matchNames: [{{ $top.Release.Namespace | quote }}]
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ .interval }}
      {{- with .scrapeTimeout }}
      scrapeTimeout: {{ . }}
      {{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- define "loopwright-controller.podMonitor" -}}
{{- $top := .top }}
{{- with $top.Values.podMonitor }}
{{- if .enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata:
  name: {{ include "loopwright-controller.fullname" $top }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "loopwright-controller.labels" $ | nindent 4 }}
    {{- with .labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "loopwright-controller.selectorLabels" $top | nindent 6 }}
  namespaceSelector:
    matchNames: [{{ $top.Release.Namespace | quote }}]
  podMetricsEndpoints:
    - port: metrics
      path: /metrics
      interval: {{ .interval }}
      {{- with .scrapeTimeout }}
      scrapeTimeout: {{ . }}
      {{- end }}
{{- end }}
{{- end }}
{{- end }}
