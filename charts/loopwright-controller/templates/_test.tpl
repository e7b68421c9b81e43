{{/*
`helm test <release>`: a Pod that checks what a user would check first, from inside the cluster:
the chart's CRDs are served (API discovery, which every authenticated client may read, lists a CRD's
resource once it is established), the leader-election Lease is held (and renewed) by one
of the release's running pods (with sharding instead: every running pod holds a renewed member Lease
of the ring), and /metrics answers on the metrics Service. It runs the controller's
own image (distroless Node.js, no shell) with a short script, under its own ServiceAccount that may
read exactly those objects, in the release namespace only. Rendered when helmTest.enabled and
rbac.create (the hook brings a Role of its own, and rbac.create=false promises no RBAC objects). All of
it is a test hook: created by `helm test` only, deleted when it
passes; a failed Pod stays for `kubectl logs`.
*/}}
{{- define "loopwright-controller.testSelectorLabels" -}}
app.kubernetes.io/name: {{ include "loopwright-controller.name" . }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "loopwright-controller.testHookAnnotations" -}}
helm.sh/hook: test
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end }}

{{- define "loopwright-controller.test" -}}
{{- $top := .top }}
{{- $v := $top.Values }}
{{- if and $v.helmTest.enabled $v.rbac.create }}
{{- $name := printf "%s-test" (include "loopwright-controller.fullname" $top) | trunc 63 | trimSuffix "-" }}
{{- $crds := include "loopwright-controller.crdResources" $top }}
{{- $sharding := include "loopwright-controller.sharding" $top }}
{{- /* Distinct from the controller's selector labels, or its ReplicaSet would adopt the test Pod. */}}
{{- $labels := include "loopwright-controller.labels" . | fromYaml }}
{{- $labels = merge (include "loopwright-controller.testSelectorLabels" $top | fromYaml) (dict "app.kubernetes.io/component" "test") $labels }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $name }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- toYaml $labels | nindent 4 }}
  annotations:
    {{- include "loopwright-controller.testHookAnnotations" -10 | nindent 4 }}
automountServiceAccountToken: true
{{- $rules := list }}
{{- if $v.leaderElection.enabled }}
{{- $rules = append $rules (dict "apiGroups" (list "coordination.k8s.io") "resources" (list "leases") "resourceNames" (list $v.leaderElection.leaseName) "verbs" (list "get")) }}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" (list "pods") "verbs" (list "list")) }}
{{- else if $sharding }}
{{- /* Member Leases are named per pod identity (generated): list the ring by label, no names. */}}
{{- $rules = append $rules (dict "apiGroups" (list "coordination.k8s.io") "resources" (list "leases") "verbs" (list "list")) }}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" (list "pods") "verbs" (list "list")) }}
{{- end }}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" (list "services") "resourceNames" (list (printf "%s-metrics" (include "loopwright-controller.fullname" $top))) "verbs" (list "get")) }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- toYaml $labels | nindent 4 }}
  annotations:
    {{- include "loopwright-controller.testHookAnnotations" -10 | nindent 4 }}
rules:
  {{- toYaml $rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- toYaml $labels | nindent 4 }}
  annotations:
    {{- include "loopwright-controller.testHookAnnotations" -10 | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $top.Release.Namespace }}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ $name }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- toYaml $labels | nindent 4 }}
  annotations:
    {{- include "loopwright-controller.testHookAnnotations" 0 | nindent 4 }}
spec:
  serviceAccountName: {{ $name }}
  automountServiceAccountToken: true
  enableServiceLinks: false
  restartPolicy: Never
  {{- with $v.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: test
      image: {{ include "loopwright-controller.image" $top | quote }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      command:
        - /nodejs/bin/node
        - --eval
        - |
          {{- include "loopwright-controller.testScript" . | nindent 10 }}
      env:
        # The API server's certificate is signed by the cluster CA the token volume carries.
        - name: NODE_EXTRA_CA_CERTS
          value: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
        - name: RELEASE_NAMESPACE
          value: {{ $top.Release.Namespace | quote }}
        - name: CRDS
          value: {{ $crds | quote }}
        - name: LEASE_NAME
          value: {{ ternary $v.leaderElection.leaseName "" $v.leaderElection.enabled | quote }}
        - name: SHARDING_RING
          value: {{ if $sharding }}{{ include "loopwright-controller.shardingRing" $top | quote }}{{ else }}""{{ end }}
        - name: POD_SELECTOR
          value: {{ include "loopwright-controller.selectorLabels" $top | fromYaml | toJson | quote }}
        - name: METRICS_SERVICE
          value: {{ printf "%s-metrics" (include "loopwright-controller.fullname" $top) | quote }}
      {{- with $v.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      resources:
        requests:
          cpu: 10m
          memory: 64Mi
        limits:
          memory: 128Mi
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if or .controller.tolerations $v.tolerations }}
  tolerations:
    {{- with .controller.tolerations }}
    {{- . | trim | nindent 4 }}
    {{- end }}
    {{- with $v.tolerations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
{{- end }}
{{- end }}

{{/* The test Pod's program (CommonJS, Node.js 24: fetch built in). One line per check; exit 1 if any fails. */}}
{{- define "loopwright-controller.testScript" -}}
const { readFileSync } = require('node:fs');
const env = process.env;
const token = readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8');
const bracketed = (host) => (host.includes(':') ? `[${host}]` : host);
const api = `https://${bracketed(env.KUBERNETES_SERVICE_HOST)}:${env.KUBERNETES_SERVICE_PORT}`;
const namespace = env.RELEASE_NAMESPACE;
const failures = [];
function check(ok, what) {
  console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
  if (!ok) failures.push(what);
}
async function get(path) {
  const response = await fetch(api + path, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}
async function crdsServed() {
  for (const resource of env.CRDS ? env.CRDS.split(',') : []) {
    const [group, version, plural] = resource.split('/');
    const discovery = await get(`/apis/${group}/${version}`);
    check(discovery.resources.some((r) => r.name === plural), `${plural}.${group}/${version} is served`);
  }
}
async function oneLeader() {
  if (!env.LEASE_NAME) return;
  const lease = await get(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${env.LEASE_NAME}`);
  const selector = Object.entries(JSON.parse(env.POD_SELECTOR)).map(([k, v]) => `${k}=${v}`).join(',');
  const pods = await get(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`);
  const running = pods.items.filter((p) => p.status.phase === 'Running').map((p) => p.metadata.name);
  const holder = lease.spec.holderIdentity ?? '';
  const leader = running.filter((pod) => holder === pod || holder.startsWith(`${pod}_`));
  check(leader.length === 1, `Lease ${namespace}/${env.LEASE_NAME} is held by one of the running pods ${running.join(', ')} (holder: ${holder || 'none'})`);
  const renewed = Date.parse(lease.spec.renewTime ?? '');
  check(Date.now() - renewed < (lease.spec.leaseDurationSeconds ?? 0) * 1000, `the Lease was renewed within its duration (at ${lease.spec.renewTime})`);
}
async function membersHoldLeases() {
  if (!env.SHARDING_RING) return;
  const ring = `sharding.loopwright.dev/ring=${env.SHARDING_RING}`;
  const leases = await get(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases?labelSelector=${encodeURIComponent(ring)}`);
  const selector = Object.entries(JSON.parse(env.POD_SELECTOR)).map(([k, v]) => `${k}=${v}`).join(',');
  const pods = await get(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`);
  const running = pods.items.filter((p) => p.status.phase === 'Running').map((p) => p.metadata.name);
  check(running.length > 0, `a replica is running (selector ${selector})`);
  for (const pod of running) {
    const held = leases.items.filter(({ spec }) => spec?.holderIdentity === pod || (spec?.holderIdentity ?? '').startsWith(`${pod}_`));
    const renewed = held.some(({ spec }) => Date.now() - Date.parse(spec.renewTime ?? '') < (spec.leaseDurationSeconds ?? 0) * 1000);
    check(renewed, `pod ${pod} holds a member Lease of ring ${env.SHARDING_RING}, renewed within its duration (${held.map((l) => l.metadata.name).join(', ') || 'none'})`);
  }
}
async function metricsAnswer() {
  // The Service's address from the API: cluster DNS may not serve this namespace's pods yet (cloud-node).
  const service = await get(`/api/v1/namespaces/${namespace}/services/${env.METRICS_SERVICE}`);
  const port = service.spec.ports.find((p) => p.name === 'metrics').port;
  const url = `http://${bracketed(service.spec.clusterIP)}:${port}/metrics`;
  const response = await fetch(url, { signal: AbortSignal.timeout(10000) });
  const body = await response.text();
  check(response.status === 200 && body.includes('# TYPE '), `${url} (Service ${env.METRICS_SERVICE}) answers with metrics`);
}
(async () => {
  for (const step of [crdsServed, oneLeader, membersHoldLeases, metricsAnswer]) {
    try {
      await step();
    } catch (error) {
      check(false, `${step.name}: ${error.message}`);
    }
  }
  process.exitCode = failures.length > 0 ? 1 : 0;
})();
{{- end }}
