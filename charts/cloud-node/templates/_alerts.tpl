{{/*
cloud-node's own alerts (a group of the PrometheusRule, after the runtime alerts; runbooks in
README.md, "Alerts").
*/}}
{{- define "cloud-node.alerts" -}}
{{- $selector := include "loopwright-controller.alertSelector" . }}
{{- $release := include "loopwright-controller.alertRelease" . }}
{{- with .Values.prometheusRule }}
{{- /* Standbys keep the value of their start-up check, however old: with leader election, the leader's
value only. */}}
{{- $leaderOnly := "" }}
{{- if $.Values.leaderElection.enabled }}
{{- $leaderOnly = printf " and on (namespace, pod) (leader_election_master_status{%s} == 1)" $selector }}
{{- end }}
- alert: LoopwrightHcloudRateLimitLow
  expr: min by (namespace) (hcloud_ratelimit_remaining{ {{- $selector -}} }{{ $leaderOnly }}) < {{ .hcloudRateLimitRemaining }}
  for: 5m
  labels:
    severity: warning
  annotations:
    summary: >-
      The Hetzner Cloud API budget of {{ $release }} is nearly spent.
    description: >-
      {{`{{ $value }}`}} requests are left in the Hetzner Cloud project's rate limit bucket (3600, one back a second) that {{ $release }} uses.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list "cloud-node" "LoopwrightHcloudRateLimitLow") }}
# Codes that are not an HTTP 2xx-4xx: 5xx, and the attempts that got no response (network_error,
# timeout, aborted). 429 has the rate limit's alert, 401/403 their own.
- alert: LoopwrightHcloudAPIErrors
  expr: |-
    sum by (namespace) (rate(hcloud_api_requests_total{ {{- $selector -}}, code!~"[234].."}[15m]))
      / sum by (namespace) (rate(hcloud_api_requests_total{ {{- $selector -}} }[15m]))
      > {{ .hcloudApiErrorRatio }}
  for: 15m
  labels:
    severity: warning
  annotations:
    summary: >-
      The Hetzner Cloud API fails requests of {{ $release }}.
    description: >-
      {{`{{ $value | humanizePercentage }}`}} of the Hetzner Cloud API requests of {{ $release }} got a 5xx or no response over the last 15 minutes.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list "cloud-node" "LoopwrightHcloudAPIErrors") }}
- alert: LoopwrightHcloudUnauthorized
  expr: sum by (namespace, code) (increase(hcloud_api_requests_total{ {{- $selector -}}, code=~"401|403"}[15m])) > 0
  labels:
    severity: critical
  annotations:
    summary: >-
      The Hetzner Cloud API refuses the token of {{ $release }}.
    description: >-
      The Hetzner Cloud API answered {{`{{ $labels.code }}`}} to {{`{{ $value | humanize }}`}} requests of {{ $release }} in 15 minutes: the token is wrong or revoked (401), or its project refuses it (403).
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list "cloud-node" "LoopwrightHcloudUnauthorized") }}
# The gauge is counted from the informer cache by every replica that has one (warm standbys too): max.
- alert: LoopwrightNodesUninitialized
  expr: max by (namespace) (loopwright_node_uninitialized_oldest_seconds{ {{- $selector -}} }) > {{ .nodeUninitializedSeconds }}
  labels:
    severity: critical
  annotations:
    summary: >-
      A Node has waited for {{ $release }} to initialise it for too long.
    description: >-
      The oldest Node with the node.cloudprovider.kubernetes.io/uninitialized taint has carried it for {{`{{ $value | humanizeDuration }}`}}; {{ $release }} has not initialised it.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list "cloud-node" "LoopwrightNodesUninitialized") }}
{{- end }}
{{- end }}
