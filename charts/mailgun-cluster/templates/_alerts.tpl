{{/*
mailgun-cluster's own alerts (a group of the PrometheusRule, after the runtime alerts; runbooks in
README.md, "Alerts").
*/}}
{{- define "mailgun-cluster.alerts" -}}
{{- $selector := include "loopwright-controller.alertSelector" . }}
{{- $release := include "loopwright-controller.alertRelease" . }}
{{- with .Values.prometheusRule }}
# 401 has its own alert.
- alert: LoopwrightMailgunRefusals
  expr: sum by (namespace, code) (increase(loopwright_mailgun_requests_total{ {{- $selector -}}, code=~"[45]..", code!="401"}[15m])) > {{ .mailgunRefusals }}
  labels:
    severity: warning
  annotations:
    summary: >-
      Mailgun refuses requests of {{ $release }}.
    description: >-
      Mailgun answered {{`{{ $labels.code }}`}} to {{`{{ $value | humanize }}`}} requests of {{ $release }} in 15 minutes.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list "mailgun-cluster" "LoopwrightMailgunRefusals") }}
- alert: LoopwrightMailgunUnauthorized
  expr: sum by (namespace) (increase(loopwright_mailgun_requests_total{ {{- $selector -}}, code="401"}[15m])) > 0
  labels:
    severity: critical
  annotations:
    summary: >-
      Mailgun refuses the API key of {{ $release }}.
    description: >-
      Mailgun answered 401 to {{`{{ $value | humanize }}`}} requests of {{ $release }} in 15 minutes: the API key is wrong or revoked, or not for this domain's region.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list "mailgun-cluster" "LoopwrightMailgunUnauthorized") }}
# Counted from the informer cache by every replica that has one (warm standbys too): max, not sum.
- alert: LoopwrightMailgunClustersUnsent
  expr: max by (namespace) (loopwright_mailgun_clusters_unsent{ {{- $selector -}} }) > 0
  for: {{ .mailgunClustersUnsentFor }}
  labels:
    severity: warning
  annotations:
    summary: >-
      MailgunClusters wait for their mail from {{ $release }}.
    description: >-
      {{`{{ $value }}`}} MailgunClusters watched by {{ $release }} have had no mail accepted by Mailgun, for {{ .mailgunClustersUnsentFor }}.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list "mailgun-cluster" "LoopwrightMailgunClustersUnsent") }}
{{- end }}
{{- end }}
