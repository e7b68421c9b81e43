{{/* True (non-empty) when this chart creates the token's Secret from values. */}}
{{- define "cloud-node.createSecret" -}}
{{- if and .Values.hcloud.token.create (not .Values.hcloud.token.existingSecret) }}true{{ end }}
{{- end }}

{{/* The Secret holding the Hetzner Cloud API token (and optionally the network): an existing one, or the one this chart creates. */}}
{{- define "cloud-node.secretName" -}}
{{- if .Values.hcloud.token.existingSecret }}
{{- .Values.hcloud.token.existingSecret }}
{{- else if .Values.hcloud.token.create }}
{{- printf "%s-hcloud" (include "loopwright-controller.fullname" .) }}
{{- else }}
{{- fail "set hcloud.token.existingSecret (a Secret holding the Hetzner Cloud API token, e.g. HCCM's `hcloud`), or hcloud.token.create=true with hcloud.token.value" }}
{{- end }}
{{- end }}

{{/*
Exactly what packages/cloud-node calls on Nodes (charts/cloud-node README, "RBAC"). Nodes are
cluster-scoped, so only a ClusterRole can grant this.
*/}}
{{- define "cloud-node.rules" -}}
# list/watch: the Node informer of both controllers; get: the fresh read after a 409 Conflict; patch:
# providerID, labels and taints (merge patches, never `update`); delete: a Node whose server is confirmed
# gone (with uid/resourceVersion preconditions).
- apiGroups: ['']
  resources: [nodes]
  verbs: [get, list, watch, patch, delete]
# status.addresses, by merge patch of the status subresource.
- apiGroups: ['']
  resources: [nodes/status]
  verbs: [patch]
{{- end }}

{{/* The controller's own env entries (the runtime's standard ones come from the library chart). */}}
{{- define "cloud-node.env" -}}
# The token is read from a file of the mounted Secret, never from an env var (env is inherited by
# children and shown by many tools); the controller redacts it from every log line.
- name: HCLOUD_TOKEN_FILE
  value: /etc/hcloud/token
{{- with .Values.hcloud.network.secretKey }}
- name: HCLOUD_NETWORK
  valueFrom:
    secretKeyRef:
      name: {{ include "cloud-node.secretName" $ | quote }}
      key: {{ . | quote }}
      # A Secret without this key means no private network, as with HCCM's Secret.
      optional: true
{{- end }}
- name: HCLOUD_ENDPOINT
  value: {{ .Values.hcloud.endpoint | quote }}
- name: HCLOUD_INSTANCES_ADDRESS_FAMILY
  value: {{ .Values.hcloud.addressFamily | quote }}
- name: HCLOUD_INSTANCES_ZONE_LABEL_ENABLED
  value: {{ .Values.hcloud.zoneLabels | quote }}
- name: HCLOUD_DEBUG
  value: {{ .Values.hcloud.debug | quote }}
- name: NODE_MONITOR_PERIOD
  value: {{ .Values.nodeMonitorPeriod | quote }}
- name: NODE_STATUS_UPDATE_FREQUENCY
  value: {{ .Values.nodeStatusUpdateFrequency | quote }}
{{- with .Values.nodeLabelSelector }}
- name: NODE_SELECTOR
  value: {{ . | quote }}
{{- end }}
{{- end }}

{{- define "cloud-node.podSpec" -}}
{{- if .Values.hostNetwork }}
hostNetwork: true
{{- end }}
# Cluster DNS may not run before Nodes are initialised (it needs a schedulable Node); the API server
# and the Hetzner API are resolved through the node's resolver instead.
dnsPolicy: Default
{{- end }}

{{- define "cloud-node.tolerations" -}}
# cloud-node initialises Nodes, so it must run on Nodes that are not initialised yet (kubelet
# --cloud-provider=external registers them with this taint)...
- key: node.cloudprovider.kubernetes.io/uninitialized
  value: 'true'
  effect: NoSchedule
# ...and not Ready yet (the CNI may wait for the addresses this controller sets), including on
# control-plane Nodes, which are often the only Nodes of a new cluster; as HCCM's chart.
- key: CriticalAddonsOnly
  operator: Exists
- key: node-role.kubernetes.io/control-plane
  operator: Exists
  effect: NoSchedule
- key: node-role.kubernetes.io/master
  operator: Exists
  effect: NoSchedule
- key: node.kubernetes.io/not-ready
  operator: Exists
  effect: NoSchedule
- key: node.kubernetes.io/not-ready
  operator: Exists
  effect: NoExecute
{{- end }}

{{- define "cloud-node.volumeMounts" -}}
- name: hcloud-token
  mountPath: /etc/hcloud
  readOnly: true
{{- end }}

{{- define "cloud-node.volumes" -}}
- name: hcloud-token
  secret:
    secretName: {{ include "cloud-node.secretName" . }}
    # 0440 (octal) written in decimal, so YAML 1.1 and 1.2 parsers agree: root-owned, readable by the
    # fsGroup 65532 the controller runs in.
    defaultMode: 288
    items:
      - key: {{ .Values.hcloud.token.secretKey | quote }}
        path: token
{{- end }}

{{- define "cloud-node.eventRules" -}}
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
