// Generated from charts/at-scheduler/crds/ats.cnat.programming-kubernetes.info.yaml by `pnpm generate`. Do not edit: edit the CRD and regenerate.
import type { ObjectMeta } from '@loopwright/informer';

/** At runs a command once, at a given time, in a pod. */
export interface At {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** What to run and when. */
  spec: AtSpec;
  /** Written by the controller only. */
  status?: AtStatus;
}

/** Written by the controller only. */
export interface AtStatus {
  /** PENDING until the schedule (the default of a new At), RUNNING once the pod is recorded, DONE when it ended or vanished. */
  phase?: 'PENDING' | 'RUNNING' | 'DONE';
  /** The metadata.generation the status was last written for. */
  observedGeneration?: number;
  /** The pod that runs (or ran) the command; recorded before the pod is created. */
  podName?: string;
  /** The finalizer the recorded pod is created with, which holds the pod until its outcome is recorded; so a recorded pod that does not exist was never created, and is created. Absent in claims written before at-scheduler 0.1.5, whose pods may have gone without a trace. */
  podFinalizer?: string;
  /** When the controller started the command (recorded the pod and created it). */
  startTime?: string;
  /** When the controller saw the pod end (or disappear). */
  completionTime?: string;
  outcome?: 'Succeeded' | 'Failed';
  /** The container's exit code, when it terminated. */
  exitCode?: number;
  /** Why the At ended as it did (container reason such as Completed or Error, the pod's such as Evicted, or PodDeleted, PodDisappeared). */
  reason?: string;
  /** Human-readable detail (the container's termination message, if any). */
  message?: string;
  /** Scheduled, Running, Succeeded, Failed, PodNotOwned, InvalidSchedule. */
  conditions?: AtStatusCondition[];
}

export interface AtStatusCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** What to run and when. */
export interface AtSpec {
  /** When to run the command: an RFC 3339 date-time (offsets and fractional seconds accepted, e.g. 2019-04-12T10:12:00Z or 2019-04-12T12:12:00.5+02:00). A time in the past runs at once. */
  schedule: string;
  /** Run as `/bin/sh -c <command>` in the image; quotes, pipes and `&&` work as in a shell. */
  command: string;
  /** Container image with /bin/sh. Default the controller's --default-image (busybox:1.37.0). */
  image?: string;
  /** Delete the finished pod this many seconds after completion; the At is kept. Default never. */
  ttlSecondsAfterFinished?: number;
  /** Compute resources of the command's container. Default requests cpu 10m, memory 16Mi and limits memory 64Mi. */
  resources?: AtSpecResources;
}

/** Compute resources of the command's container. Default requests cpu 10m, memory 16Mi and limits memory 64Mi. */
export interface AtSpecResources {
  limits?: Record<string, number | string>;
  requests?: Record<string, number | string>;
}
