import type { EnvVariable } from './program.ts';

/** What `loadKubeConfig` reads from the environment (besides HOME, for `~/.kube/config`). */
export const KUBE_CONFIG_VARIABLES: readonly EnvVariable[] = [
  {
    name: 'KUBECONFIG',
    description:
      'kubeconfig file(s), ":"-separated; unset: the in-cluster service account, else ~/.kube/config',
  },
  {
    name: 'KUBERNETES_SERVICE_HOST',
    description: 'set by Kubernetes in a pod; with KUBERNETES_SERVICE_PORT selects the in-cluster config',
  },
  {
    name: 'KUBERNETES_SERVICE_PORT',
    description: 'set by Kubernetes in a pod (see KUBERNETES_SERVICE_HOST)',
  },
];
