{{/*
networkPolicy.enabled: ingress to the controller's pods only on the metrics and probes ports, from
networkPolicy.ingressFrom (empty: from anywhere; otherwise also from this chart's helm test pod, which
scrapes /metrics). Egress stays open unless networkPolicy.egress lists rules: the controller must reach
the API server, whose address and port differ per cluster (often a host-network endpoint no pod
selector matches), and its third-party API; a wrong guess here would stop the controller.
*/}}
{{- define "loopwright-controller.networkPolicy" -}}
{{- $top := .top }}
{{- with $top.Values.networkPolicy }}
{{- if .enabled }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "loopwright-controller.fullname" $top }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "loopwright-controller.labels" $ | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "loopwright-controller.selectorLabels" $top | nindent 6 }}
  policyTypes:
    - Ingress
    {{- if .egress }}
    - Egress
    {{- end }}
  ingress:
    - ports:
        - port: metrics
          protocol: TCP
        - port: probes
          protocol: TCP
      {{- with .ingressFrom }}
      from:
        {{- toYaml . | nindent 8 }}
        - podSelector:
            matchLabels:
              {{- include "loopwright-controller.testSelectorLabels" $top | nindent 14 }}
      {{- end }}
  {{- with .egress }}
  egress:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}
{{- end }}
