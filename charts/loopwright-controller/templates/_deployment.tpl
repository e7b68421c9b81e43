{{- define "loopwright-controller.deployment" -}}
{{- $top := .top }}
{{- $c := .controller }}
{{- $v := $top.Values }}
{{- $sharding := include "loopwright-controller.sharding" $top }}
{{- if and $sharding $v.leaderElection.enabled }}
{{- fail "sharding.enabled=true replaces leader election: set leaderElection.enabled=false" }}
{{- end }}
{{- if and (not $sharding) (not $v.leaderElection.enabled) (gt (int $v.replicaCount) 1) }}
{{- fail (printf "leaderElection.enabled=false needs replicaCount 1: %s" $c.oneReplicaReason) }}
{{- end }}
{{- $selectorLabels := include "loopwright-controller.selectorLabels" $top }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "loopwright-controller.fullname" $top }}
  namespace: {{ $top.Release.Namespace }}
  labels:
    {{- include "loopwright-controller.labels" . | nindent 4 }}
spec:
  replicas: {{ $v.replicaCount }}
  revisionHistoryLimit: {{ $v.revisionHistoryLimit }}
  selector:
    matchLabels:
      {{- $selectorLabels | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "loopwright-controller.labels" . | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with merge (dict) ($c.podAnnotations | default dict) ($v.podAnnotations | default dict) }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "loopwright-controller.serviceAccountName" $top }}
      automountServiceAccountToken: true
      enableServiceLinks: false
      {{- with $c.podSpec }}
      {{- . | trim | nindent 6 }}
      {{- end }}
      {{- with $v.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $v.podSecurityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: controller
          image: {{ include "loopwright-controller.image" $top | quote }}
          imagePullPolicy: {{ $v.image.pullPolicy }}
          {{- with $v.extraArgs }}
          # After the image's ENTRYPOINT (node dist/main.js): command-line flags of the controller.
          args:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            {{- with $c.env }}
            {{- . | trim | nindent 12 }}
            {{- end }}
            {{- if and (hasKey $v "watchNamespaces") $v.watchNamespaces }}
            - name: WATCH_NAMESPACE
              value: {{ join "," $v.watchNamespaces | quote }}
            {{- end }}
            - name: WORKERS
              value: {{ $v.workers | quote }}
            - name: LEADER_ELECT
              value: {{ $v.leaderElection.enabled | quote }}
            {{- if $v.leaderElection.enabled }}
            - name: LEADER_ELECTION_NAMESPACE
              value: {{ $top.Release.Namespace | quote }}
            - name: LEADER_ELECTION_ID
              value: {{ $v.leaderElection.leaseName | quote }}
            - name: WARM_STANDBY
              value: {{ $v.leaderElection.warmStandby | quote }}
            {{- end }}
            {{- if $sharding }}
            # Every replica reconciles its share; member Leases in the pod's namespace (the release's).
            - name: SHARDING
              value: "true"
            - name: SHARDING_RING
              value: {{ include "loopwright-controller.shardingRing" $top | quote }}
            {{- end }}
            {{- with $v.reconcileTimeout }}
            - name: RECONCILE_TIMEOUT
              value: {{ . | quote }}
            {{- end }}
            - name: METRICS_BIND_ADDRESS
              value: {{ printf ":%v" $v.metricsPort | quote }}
            - name: HEALTH_PROBE_BIND_ADDRESS
              value: {{ printf ":%v" $v.probePort | quote }}
            - name: KUBE_API_QPS
              value: {{ $v.kubeApi.qps | quote }}
            - name: KUBE_API_BURST
              value: {{ $v.kubeApi.burst | quote }}
            - name: LOG_LEVEL
              value: {{ $c.logLevel | default $v.logLevel | quote }}
            - name: LOG_FORMAT
              value: {{ $v.logFormat | quote }}
            {{- with $v.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - name: metrics
              containerPort: {{ $v.metricsPort }}
              protocol: TCP
            - name: probes
              containerPort: {{ $v.probePort }}
              protocol: TCP
          livenessProbe:
            httpGet:
              path: /healthz
              port: probes
            initialDelaySeconds: 10
            periodSeconds: 10
            failureThreshold: 3
          readinessProbe:
            httpGet:
              path: /readyz
              port: probes
            periodSeconds: 5
            failureThreshold: 3
          {{- with $v.securityContext }}
          securityContext:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with $v.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          volumeMounts:
            # The root filesystem is read-only; Node.js may still want a scratch directory.
            - name: tmp
              mountPath: /tmp
            {{- with $c.volumeMounts }}
            {{- . | trim | nindent 12 }}
            {{- end }}
            {{- with $v.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 16Mi
        {{- with $c.volumes }}
        {{- . | trim | nindent 8 }}
        {{- end }}
        {{- with $v.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if or $c.tolerations $v.tolerations }}
      tolerations:
        {{- with $c.tolerations }}
        {{- . | trim | nindent 8 }}
        {{- end }}
        {{- with $v.tolerations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
      affinity:
        {{- if $v.affinity }}
        {{- toYaml $v.affinity | nindent 8 }}
        {{- else }}
        # Spread the leader and its standby across nodes, so a node loss costs one lease duration at most.
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    {{- $selectorLabels | nindent 20 }}
        {{- end }}
      {{- with $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- range . }}
        {{- /* A constraint without a labelSelector spreads this release's pods; one with its own keeps it
        as it is (merge would add this release's labels into it). */}}
        {{- $constraint := deepCopy . }}
        {{- if not $constraint.labelSelector }}
        {{- $_ := set $constraint "labelSelector" (dict "matchLabels" ($selectorLabels | fromYaml)) }}
        {{- end }}
        - {{- toYaml $constraint | nindent 10 }}
        {{- end }}
      {{- end }}
{{- end }}
