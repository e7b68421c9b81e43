{{- define "loopwright-controller.podDisruptionBudget" -}}
{{- $top := .top }}
{{- with $top.Values.podDisruptionBudget }}
{{- if .enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "loopwright-controller.fullname" $top }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "loopwright-controller.labels" $ | nindent 4 }}
spec:
  {{- if not (kindIs "invalid" .maxUnavailable) }}
  maxUnavailable: {{ .maxUnavailable }}
  {{- else }}
  minAvailable: {{ .minAvailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "loopwright-controller.selectorLabels" $top | nindent 6 }}
{{- end }}
{{- end }}
{{- end }}
