{{/*
This chart's part of the library chart's objects (see loopwright-controller.objects), as YAML. The label
is Cluster API's provider label, on every object of this provider (clusterctl selects by it).
*/}}
{{- define "mailgun-cluster.controller" -}}
{{- $podAnnotations := dict }}
{{- if include "mailgun-cluster.createSecret" . }}
{{- /* The key file is re-read when the kubelet updates it; a restart applies a new key at once. */}}
{{- $_ := set $podAnnotations "checksum/mailgun-api-key" (.Values.mailgun.apiKey.value | sha256sum) }}
{{- end }}
{{- dict
  "rules" (include "mailgun-cluster.rules" .)
  "oneReplicaReason" "two active replicas would race for every send claim"
  "env" (include "mailgun-cluster.env" .)
  "alerts" (include "mailgun-cluster.alerts" .)
  "labels" (dict "cluster.x-k8s.io/provider" "infrastructure-mailgun")
  "podAnnotations" $podAnnotations
  "volumes" (include "mailgun-cluster.volumes" .)
  "volumeMounts" (include "mailgun-cluster.volumeMounts" .)
| toYaml }}
{{- end }}

{{/* True (non-empty) when this chart creates the API key's Secret from values. */}}
{{- define "mailgun-cluster.createSecret" -}}
{{- if and .Values.mailgun.apiKey.create (not .Values.mailgun.apiKey.existingSecret) }}true{{ end }}
{{- end }}

{{/* The Secret holding the Mailgun API key: an existing one, or the one this chart creates. */}}
{{- define "mailgun-cluster.secretName" -}}
{{- if .Values.mailgun.apiKey.existingSecret }}
{{- .Values.mailgun.apiKey.existingSecret }}
{{- else if .Values.mailgun.apiKey.create }}
{{- printf "%s-mailgun" (include "loopwright-controller.fullname" .) }}
{{- else }}
{{- fail "set mailgun.apiKey.existingSecret (a Secret holding the Mailgun API key), or mailgun.apiKey.create=true with mailgun.apiKey.value" }}
{{- end }}
{{- end }}

{{/*
Exactly what packages/mailgun-cluster calls (charts/mailgun-cluster README, "RBAC"); the same list in
the ClusterRole (all namespaces) and in each per-namespace Role (watchNamespaces).
*/}}
{{- define "mailgun-cluster.rules" -}}
# Informers (list/watch) and the message-id annotation (merge patch of metadata).
- apiGroups: [infrastructure.cluster.x-k8s.io]
  resources: [mailgunclusters, mailgunmachines]
  verbs: [list, watch, patch]
# The send claim, the recorded id, conditions and contract fields (merge patch of status).
- apiGroups: [infrastructure.cluster.x-k8s.io]
  resources: [mailgunclusters/status, mailgunmachines/status]
  verbs: [patch]
# Owners and pause state, read from informer caches only.
- apiGroups: [cluster.x-k8s.io]
  resources: [clusters, machines]
  verbs: [list, watch]
# events.k8s.io/v1 Events: create, and patch for the runtime recorder's series counts of repeats.
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}

{{/* The controller's own env entries (the runtime's standard ones come from the library chart). */}}
{{- define "mailgun-cluster.env" -}}
- name: MAILGUN_DOMAIN
  value: {{ required "mailgun.domain is required (the sending domain, e.g. mg.example.com)" .Values.mailgun.domain | quote }}
- name: MAILGUN_URL
  value: {{ .Values.mailgun.url | quote }}
# The key is read from a file of the mounted Secret, never from an env var (env is inherited by
# children and shown by many tools), and re-read when the Secret changes; the controller redacts
# it from every log line.
- name: MAILGUN_API_KEY_FILE
  value: /etc/mailgun/api-key
- name: MAIL_RECIPIENT
  value: {{ required "recipient is required (the address that receives the requests)" .Values.recipient | quote }}
- name: MAILGUN_TIMEOUT
  value: {{ .Values.mailgun.timeout | quote }}
- name: MAILGUN_EVENTS_SETTLE_TIME
  value: {{ .Values.mailgun.eventsSettleTime | quote }}
- name: MAILGUN_UNAUTHORIZED_RETRY_DELAY
  value: {{ .Values.mailgun.unauthorizedRetryDelay | quote }}
{{- end }}

{{- define "mailgun-cluster.volumeMounts" -}}
- name: mailgun-api-key
  mountPath: /etc/mailgun
  readOnly: true
{{- end }}

{{- define "mailgun-cluster.volumes" -}}
- name: mailgun-api-key
  secret:
    secretName: {{ include "mailgun-cluster.secretName" . }}
    # 0440 (octal) written in decimal, so YAML 1.1 and 1.2 parsers agree: root-owned, readable by the
    # fsGroup 65532 the controller runs in.
    defaultMode: 288
    items:
      - key: {{ .Values.mailgun.apiKey.secretKey | quote }}
        path: api-key
{{- end }}
