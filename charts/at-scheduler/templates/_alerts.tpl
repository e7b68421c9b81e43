{{/*
at-scheduler's own alerts (a group of the PrometheusRule, after the runtime alerts; runbooks in
README.md, "Alerts"). The gauges are counted from the informer cache at scrape time by every replica
that has one (warm standbys too): max, not sum.
*/}}
{{- define "at-scheduler.alerts" -}}
{{- $selector := include "loopwright-controller.alertSelector" . }}
{{- $release := include "loopwright-controller.alertRelease" . }}
{{- with .Values.prometheusRule }}
- alert: LoopwrightAtsOverdue
  expr: max by (namespace) (loopwright_ats_overdue{ {{- $selector -}} }) > {{ .atsOverdue }}
  for: 5m
  labels:
    severity: critical
  annotations:
    summary: >-
      Ats are not started on time by {{ $release }}.
    description: >-
      {{`{{ $value }}`}} Ats watched by {{ $release }} have had no pod for more than a minute after their schedule, for 5 minutes.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list "at-scheduler" "LoopwrightAtsOverdue") }}
# Counted by the leader when an At finishes: summed, so a leader change does not hide a failure.
- alert: LoopwrightAtsFailed
  expr: sum by (namespace) (increase(loopwright_ats_finished_total{ {{- $selector -}}, result="failed"}[15m])) > {{ .atsFailed }}
  labels:
    severity: warning
  annotations:
    summary: >-
      Ats run by {{ $release }} failed.
    description: >-
      {{`{{ $value | humanize }}`}} Ats run by {{ $release }} finished with phase Failed in the last 15 minutes.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list "at-scheduler" "LoopwrightAtsFailed") }}
{{- end }}
{{- end }}
