/** The pod that runs an At's command. */
import { COMMAND_CONTAINER } from './decide.ts';
import type { At, AtSpecResources } from './generated/types.ts';
import { atNameLabelValue } from './names.ts';
import {
  AT_API_VERSION,
  AT_KIND,
  AT_NAME_LABEL,
  AT_OUTCOME_FINALIZER,
  AT_UID_LABEL,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  type Pod,
} from './resource.ts';

/** busybox's `nobody`: any image with /bin/sh runs as a fixed non-root user. */
export const RUN_AS_USER = 65534;

/** Used when the At sets no `spec.resources`. */
export const DEFAULT_RESOURCES: AtSpecResources = {
  requests: { cpu: '10m', memory: '16Mi' },
  limits: { memory: '64Mi' },
};

export interface PodOptions {
  /** Used when the At sets no `spec.image`. */
  defaultImage: string;
}

/**
 * `/bin/sh -c <command>` (busybox has no bash) so quotes, pipes and `&&` behave as typed; `restartPolicy:
 * Never` so a failure is an outcome rather than a restart loop; a restricted-Pod-Security context; no
 * service-account token (the command needs no API access); a controller owner reference so deleting
 * the At deletes the pod (blockOwnerDeletion: foreground deletion of the At waits for it); the outcome
 * finalizer, removed once the At records how the pod ended (or the At is gone).
 */
export function buildPod(
  at: At & { metadata: { name: string; namespace: string; uid: string } },
  podName: string,
  options: PodOptions,
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName,
      namespace: at.metadata.namespace,
      labels: {
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
        [AT_NAME_LABEL]: atNameLabelValue(at.metadata.name),
        [AT_UID_LABEL]: at.metadata.uid,
      },
      ownerReferences: [
        {
          apiVersion: AT_API_VERSION,
          kind: AT_KIND,
          name: at.metadata.name,
          uid: at.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      finalizers: [AT_OUTCOME_FINALIZER],
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: RUN_AS_USER,
        runAsGroup: RUN_AS_USER,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: COMMAND_CONTAINER,
          image: at.spec.image ?? options.defaultImage,
          command: ['/bin/sh', '-c', at.spec.command],
          resources: at.spec.resources ?? DEFAULT_RESOURCES,
          // The last log lines become the termination message on failure: status.message shows why.
          terminationMessagePolicy: 'FallbackToLogsOnError',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
            runAsNonRoot: true,
          },
        },
      ],
    },
  };
}
