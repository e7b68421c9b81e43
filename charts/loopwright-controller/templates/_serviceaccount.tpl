{{- define "loopwright-controller.serviceAccount" -}}
{{- $top := .top }}
{{- if $top.Values.serviceAccount.create }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "loopwright-controller.serviceAccountName" $top }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "loopwright-controller.labels" . | nindent 4 }}
  {{- with $top.Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
# The controller talks to the API server with this account's projected token.
automountServiceAccountToken: true
{{- end }}
{{- end }}
