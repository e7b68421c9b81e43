{{/*
The PrometheusRule (prometheusRule.enabled): two groups of a plain Prometheus rule file, the runtime
alerts every controller shares (below) and the controller's own (the controller part's `alerts`, a YAML
list of rules, when it has any). Every expression selects this release's pods only, so two releases
(two controllers, or one controller installed twice) never alert on each other's series.

Alert texts are Prometheus templates: {{`{{ $labels.x }}`}} is written out literally for Prometheus.
*/}}
{{- define "loopwright-controller.prometheusRule" -}}
{{- $top := .top }}
{{- with $top.Values.prometheusRule }}
{{- if .enabled }}
{{- $fullname := include "loopwright-controller.fullname" $top }}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ $fullname }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "loopwright-controller.labels" $ | nindent 4 }}
    {{- with .labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  groups:
    # Group names carry the release, so the rule files of several releases can be loaded side by side.
    - name: {{ $fullname }}.runtime
      rules:
        {{- include "loopwright-controller.runtimeAlerts" $top | nindent 8 }}
    {{- with $.controller.alerts }}
    - name: {{ $fullname }}
      rules:
        {{- . | nindent 8 }}
    {{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The label matchers of this release's series: its namespace, and its pods by name. A Deployment's pods
are named <deployment>-<pod-template-hash>-<suffix> (both alphanumeric), so the anchored pattern cannot
match a release whose name merely starts with this one's. Both the ServiceMonitor and the PodMonitor
give every series `namespace` and `pod`. Takes the chart's root context.
*/}}
{{- define "loopwright-controller.alertSelector" -}}
namespace="{{ .Release.Namespace }}", pod=~"{{ include "loopwright-controller.fullname" . }}-[a-z0-9]+-[a-z0-9]+"
{{- end }}

{{/* How alert texts name this release. Takes the chart's root context. */}}
{{- define "loopwright-controller.alertRelease" -}}
{{ include "loopwright-controller.fullname" . }} in namespace {{ .Release.Namespace }}
{{- end }}

{{/*
Where an alert's runbook is: its section in a chart README on GitHub. Takes (list <chart name> <alert
name>); the section's heading is the alert name, so its anchor is that name in lower case.
*/}}
{{- define "loopwright-controller.runbookUrl" -}}
{{- printf "https://github.com/loopwright/loopwright/blob/main/charts/%s/README.md#%s" (index . 0) (index . 1 | lower) }}
{{- end }}

{{/*
The runtime alerts every controller shares; their runbooks are in the library chart's README, once.
Takes the chart's root context; thresholds come from .Values.prometheusRule.
*/}}
{{- define "loopwright-controller.runtimeAlerts" -}}
{{- $selector := include "loopwright-controller.alertSelector" . }}
{{- $release := include "loopwright-controller.alertRelease" . }}
{{- $runbook := "loopwright-controller" }}
{{- with .Values.prometheusRule }}
{{- if $.Values.leaderElection.enabled }}
# `or vector(0)`: no series at all (no replica running, or none scraped) is no leader either.
- alert: LoopwrightNoLeader
  expr: (max(leader_election_master_status{ {{- $selector -}} }) or vector(0)) < 1
  for: 5m
  labels:
    severity: critical
  annotations:
    summary: >-
      No replica of {{ $release }} has led for 5 minutes.
    description: >-
      No replica of {{ $release }} reports holding its Lease (or no replica is scraped at all), so nothing is reconciled.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightNoLeader") }}
{{- else if (include "loopwright-controller.sharding" $) }}
# Sharded, every replica reconciles the share of the hash space it holds: "no leader" is a share that
# nobody holds. The shares are multiples of 1/256, so their sum is exactly 1 when every range has a
# holder; a hand-off leaves a gap for seconds, not minutes. `or vector(0)`: no replica scraped holds none.
- alert: LoopwrightNoLeader
  expr: (sum(loopwright_shard_owned_fraction{ {{- $selector -}} }) or vector(0)) < 1
  for: 5m
  labels:
    severity: critical
  annotations:
    summary: >-
      Part of the objects of {{ $release }} has had no replica for 5 minutes.
    description: >-
      {{`{{ $value | humanizePercentage }}`}} of the hash space of {{ $release }} (sharded) is held by a replica that is up and scraped; the objects of the rest are not reconciled.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightNoLeader") }}
{{- else }}
# Without leader election the one replica reconciles as soon as it runs: "no leader" is "no replica".
- alert: LoopwrightNoLeader
  expr: (max(up{ {{- $selector -}} }) or vector(0)) < 1
  for: 5m
  labels:
    severity: critical
  annotations:
    summary: >-
      No replica of {{ $release }} has run for 5 minutes.
    description: >-
      No replica of {{ $release }} (leader election off) is up and scraped, so nothing is reconciled.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightNoLeader") }}
{{- end }}
# Summed over the pods, so a leader change inside the window does not split the ratio.
- alert: LoopwrightReconcileErrors
  expr: |-
    sum by (namespace, controller) (rate(controller_runtime_reconcile_errors_total{ {{- $selector -}} }[15m]))
      / sum by (namespace, controller) (rate(controller_runtime_reconcile_total{ {{- $selector -}} }[15m]))
      > {{ .reconcileErrorRatio }}
  for: 15m
  labels:
    severity: warning
  annotations:
    summary: >-
      {{`Controller {{ $labels.controller }}`}} of {{ $release }} fails more than {{ round (mulf .reconcileErrorRatio 100) 2 }}% of its reconciles.
    description: >-
      {{`{{ $value | humanizePercentage }} of the reconciles of controller {{ $labels.controller }} in namespace {{ $labels.namespace }}`}} failed over the last 15 minutes.
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightReconcileErrors") }}
# The priorities of a priority queue are one backlog.
- alert: LoopwrightWorkqueueDepth
  expr: sum by (namespace, pod, name) (workqueue_depth{ {{- $selector -}} }) > {{ .workqueueDepth }}
  for: 15m
  labels:
    severity: warning
  annotations:
    summary: >-
      {{`Workqueue {{ $labels.name }}`}} of {{ $release }} holds more than {{ .workqueueDepth }} keys.
    description: >-
      {{`Workqueue {{ $labels.name }} of pod {{ $labels.pod }} in namespace {{ $labels.namespace }} has held more than`}} {{ .workqueueDepth }} {{`keys for 15 minutes (now {{ $value }}).`}}
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightWorkqueueDepth") }}
- alert: LoopwrightWorkqueueStuck
  expr: max by (namespace, pod, name) (workqueue_longest_running_processor_seconds{ {{- $selector -}} }) > {{ .workqueueLongestRunningSeconds }}
  for: 5m
  labels:
    severity: warning
  annotations:
    summary: >-
      {{`A worker of workqueue {{ $labels.name }}`}} of {{ $release }} has held one key for more than {{ .workqueueLongestRunningSeconds }} s.
    description: >-
      {{`The oldest key in process in workqueue {{ $labels.name }} of pod {{ $labels.pod }} in namespace {{ $labels.namespace }} is {{ $value | humanizeDuration }} old.`}}
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightWorkqueueStuck") }}
- alert: LoopwrightInformerRelists
  expr: sum by (namespace, pod, resource) (increase(loopwright_informer_relists_total{ {{- $selector -}} }[15m])) > {{ .informerRelists }}
  labels:
    severity: warning
  annotations:
    summary: >-
      {{`The {{ $labels.resource }} informer`}} of {{ $release }} relisted more than {{ .informerRelists }} times in 15 minutes.
    description: >-
      {{`The {{ $labels.resource }} informer of pod {{ $labels.pod }} in namespace {{ $labels.namespace }} made {{ $value | humanize }} full lists in 15 minutes: its watch keeps expiring.`}}
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightInformerRelists") }}
# client_error has its own alert (it fires on the first one).
- alert: LoopwrightInformerWatchErrors
  expr: sum by (namespace, pod, resource) (increase(loopwright_informer_watch_errors_total{ {{- $selector -}}, reason!="client_error"}[15m])) > {{ .informerWatchErrors }}
  labels:
    severity: warning
  annotations:
    summary: >-
      {{`The {{ $labels.resource }} informer`}} of {{ $release }} had more than {{ .informerWatchErrors }} failed lists or watches in 15 minutes.
    description: >-
      {{`The {{ $labels.resource }} informer of pod {{ $labels.pod }} in namespace {{ $labels.namespace }} had {{ $value | humanize }} failed list or watch requests in 15 minutes.`}}
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightInformerWatchErrors") }}
- alert: LoopwrightInformerClientErrors
  expr: sum by (namespace, pod, resource) (increase(loopwright_informer_watch_errors_total{ {{- $selector -}}, reason="client_error"}[15m])) > 0
  labels:
    severity: critical
  annotations:
    summary: >-
      {{`The API server refuses the {{ $labels.resource }} informer`}} of {{ $release }} (4xx: usually RBAC).
    description: >-
      {{`List or watch of {{ $labels.resource }} by pod {{ $labels.pod }} in namespace {{ $labels.namespace }} was refused {{ $value | humanize }} times in 15 minutes; its cache is not kept up to date.`}}
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightInformerClientErrors") }}
# A full queue or an invalid Event is a loss to look into. The spam filter drops repeats about one
# object by design (a burst of 25, then one per 5 minutes): only a storm of those is worth a page.
# `closed` (Events after shutdown began) is the normal end of a pod.
- alert: LoopwrightEventsDropped
  expr: |-
    sum by (namespace, pod, cause) (increase(loopwright_events_dropped_total{ {{- $selector -}}, cause=~"queue-full|invalid"}[15m])) > 0
      or sum by (namespace, pod, cause) (increase(loopwright_events_dropped_total{ {{- $selector -}}, cause="spam-filter"}[15m])) > {{ .eventsSpamDrops }}
  labels:
    severity: warning
  annotations:
    summary: >-
      Events of {{ $release }} are being dropped ({{`{{ $labels.cause }}`}}).
    description: >-
      {{`Pod {{ $labels.pod }} in namespace {{ $labels.namespace }} dropped {{ $value | humanize }} Events in 15 minutes, cause {{ $labels.cause }}.`}}
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightEventsDropped") }}
# A container restart keeps the pod (and the series) and changes the start time; a new pod (rollout)
# is a new series and does not count.
- alert: LoopwrightProcessRestarts
  expr: changes(process_start_time_seconds{ {{- $selector -}} }[1h]) >= {{ .processRestarts }}
  labels:
    severity: warning
  annotations:
    summary: >-
      {{`Pod {{ $labels.pod }}`}} of {{ $release }} restarted its controller {{`{{ $value }}`}} times in an hour.
    description: >-
      {{`The controller process of pod {{ $labels.pod }} in namespace {{ $labels.namespace }} started {{ $value }} times anew in the last hour.`}}
    runbook_url: {{ include "loopwright-controller.runbookUrl" (list $runbook "LoopwrightProcessRestarts") }}
{{- end }}
{{- end }}
