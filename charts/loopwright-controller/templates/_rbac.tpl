{{/*
RBAC: the chart's rules cluster-wide (a ClusterRole), or, in a chart with watchNamespaces set, the same
rules in a Role per watched namespace; its extra namespaced roles; the Lease Role for leader election,
or with sharding the member Leases' Role.
Every binding names the controller's ServiceAccount in the release namespace.
*/}}
{{- define "loopwright-controller.rbac" -}}
{{- $top := .top }}
{{- $v := $top.Values }}
{{- if $v.rbac.create }}
{{- $fullname := include "loopwright-controller.fullname" $top }}
{{- $watchNamespaces := ternary $v.watchNamespaces list (hasKey $v "watchNamespaces") }}
{{- if not $watchNamespaces }}
{{- include "loopwright-controller.grant" (dict "ctx" . "kind" "ClusterRole" "name" $fullname "rules" .controller.rules "comment" "All namespaces: one ClusterRole with exactly what the controller calls.") }}
{{- else }}
{{- range $namespace := $watchNamespaces }}
{{- include "loopwright-controller.grant" (dict "ctx" $ "kind" "Role" "name" $fullname "namespace" $namespace "rules" $.controller.rules "comment" (printf "watchNamespaces: the same rules, granted only in %s." $namespace)) }}
{{- end }}
{{- end }}
{{- range .controller.roles }}
{{- include "loopwright-controller.grant" (dict "ctx" $ "kind" "Role" "name" (printf "%s-%s" $fullname .suffix) "namespace" (.namespace | default $top.Release.Namespace) "rules" .rules "comment" .comment) }}
{{- end }}
{{- if $v.leaderElection.enabled }}
{{- $leaseRules := printf "- apiGroups: [coordination.k8s.io]\n  resources: [leases]\n  resourceNames: [%s]\n  verbs: [get, update]\n- apiGroups: [coordination.k8s.io]\n  resources: [leases]\n  verbs: [create]" ($v.leaderElection.leaseName | quote) }}
{{- include "loopwright-controller.grant" (dict "ctx" . "kind" "Role" "name" (printf "%s-leader-election" $fullname) "namespace" $top.Release.Namespace "rules" $leaseRules "comment" "Leader election: get/update only on the Lease's own name; create cannot be limited by name.") }}
{{- end }}
{{- if include "loopwright-controller.sharding" $top }}
{{- $memberRules := "- apiGroups: [coordination.k8s.io]\n  resources: [leases]\n  verbs: [list, watch, create, update, delete]" }}
{{- include "loopwright-controller.grant" (dict "ctx" . "kind" "Role" "name" (printf "%s-sharding" $fullname) "namespace" $top.Release.Namespace "rules" $memberRules "comment" "Sharding: list and watch (the ring, by label: the watch sees a member's last renewal when it happens, so a crashed member's ranges are taken a lease duration after it), create/update (its own member Lease), delete (its own on leave, and members' Leases expired for 10 lease durations); no get. Names cannot be limited: each pod's Lease is named after its identity, generated per pod.") }}
{{- end }}
{{- end }}
{{- end }}

{{/* A ClusterRole or Role with `rules` (YAML) and its binding to the controller's ServiceAccount. */}}
{{- define "loopwright-controller.grant" -}}
{{- $top := .ctx.top }}
---
{{- with .comment }}
# {{ . }}
{{- end }}
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ .kind }}
metadata:
  name: {{ .name }}
  {{- with .namespace }}
  namespace: {{ . }}
  {{- end }}
  labels:
    {{- include "loopwright-controller.labels" .ctx | nindent 4 }}
rules:
  {{- .rules | trim | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ .kind }}Binding
metadata:
  name: {{ .name }}
  {{- with .namespace }}
  namespace: {{ . }}
  {{- end }}
  labels:
    {{- include "loopwright-controller.labels" .ctx | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: {{ .kind }}
  name: {{ .name }}
subjects:
  - kind: ServiceAccount
    name: {{ include "loopwright-controller.serviceAccountName" $top }}
    namespace: {{ $top.Release.Namespace }}
{{- end }}
