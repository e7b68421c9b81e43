{{/*
Every object of a controller chart, from one call in the chart's templates/controller.yaml:

  {{- include "loopwright-controller.objects" (dict "top" . "controller" $controller) }}

$controller is the chart's part, a dict (string fields are YAML, so comments reach the output):
  rules             the controller's RBAC rules (a YAML list): a ClusterRole, or with a non-empty
                    .Values.watchNamespaces (in charts whose values have that key) a Role per namespace
  roles             extra namespaced grants: a list of dicts {suffix, namespace (default: the release's),
                    rules (YAML list)}, each a Role <fullname>-<suffix> and its RoleBinding
  oneReplicaReason  why leaderElection.enabled=false needs replicaCount 1, for the error message
  env               the controller's own env entries (a YAML list), after POD_NAME and POD_NAMESPACE
  logLevel          LOG_LEVEL when the chart derives it (default .Values.logLevel)
  labels            labels on every object (a dict)
  podAnnotations    annotations on the pods (a dict), e.g. a checksum of a Secret the chart creates
  podSpec           extra pod spec fields (YAML), e.g. hostNetwork, dnsPolicy
  tolerations       tolerations before .Values.tolerations (a YAML list)
  volumes, volumeMounts   the controller's own (YAML lists), besides /tmp and the extra ones from values
  alerts            the controller's own alerting rules (a YAML list of Prometheus rules), a group of
                    the PrometheusRule after the runtime alerts; select its series with
                    `include "loopwright-controller.alertSelector" .`
Sharding is offered by a chart whose values have a `sharding` key ({enabled, ring}), as watchNamespaces
is: only a chart whose program has --sharding has it. Enabled: SHARDING and SHARDING_RING (default: the
full name), the member Leases' Role instead of the leader-election one (leaderElection.enabled=true with
it fails), any replicaCount, and a helm test that checks every running replica's member Lease.
The chart's Grafana dashboards are read from its dashboards/ directory.
The chart's CRDs are read from its crds/ directory.
*/}}
{{- define "loopwright-controller.objects" -}}
{{- include "loopwright-controller.serviceAccount" . }}
{{- include "loopwright-controller.rbac" . }}
{{- include "loopwright-controller.service" . }}
{{- include "loopwright-controller.deployment" . }}
{{- include "loopwright-controller.serviceMonitor" . }}
{{- include "loopwright-controller.podMonitor" . }}
{{- include "loopwright-controller.prometheusRule" . }}
{{- include "loopwright-controller.dashboards" . }}
{{- include "loopwright-controller.podDisruptionBudget" . }}
{{- include "loopwright-controller.networkPolicy" . }}
{{- include "loopwright-controller.test" . }}
{{- end }}
