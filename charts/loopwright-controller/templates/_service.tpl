{{- define "loopwright-controller.service" -}}
{{- $top := .top }}
---
# Metrics Service: /metrics of every replica (standbys included: their informers run too).
apiVersion: v1
kind: Service
metadata:
  name: {{ include "loopwright-controller.fullname" $top }}-metrics
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "loopwright-controller.labels" . | nindent 4 }}
spec:
  type: {{ $top.Values.service.type }}
  selector:
    {{- include "loopwright-controller.selectorLabels" $top | nindent 4 }}
  ports:
    - name: metrics
      port: {{ $top.Values.service.port }}
      targetPort: metrics
      protocol: TCP
{{- end }}
