/**
 * What a real kubelet leaves behind of a pod that ran: the node it ran on, its container's exit code and
 * log. Read through the API server, as `kubectl get pod` and `kubectl logs` read them.
 */
import { KubeApiError, type KubeClient, type KubeObject } from '@loopwright/runtime';
import { TIMESTAMPED_LOG_QUERY, readTimestampedLog } from '@loopwright/cluster';
import { NAMESPACE } from './names.ts';
import { PODS } from './resources.ts';

/**
 * A container's log through the API server (which asks the kubelet), as `kubectl logs` reads it; with
 * `previous`, that of the container before its last restart. Throws on an error status (`HTTP <status>:
 * <the server's message>`), and when the kubelet's answer is not the log (its error text under a 200:
 * see `readTimestampedLog`).
 */
export async function podLog(
  client: KubeClient,
  pod: string,
  container: string,
  options: { previous?: boolean; tailLines?: number } = {},
): Promise<string> {
  const query: Record<string, string | number | boolean> = { container, ...TIMESTAMPED_LOG_QUERY };
  if (options.previous) query.previous = true;
  if (options.tailLines !== undefined) query.tailLines = options.tailLines;
  let text: string;
  try {
    text = await client
      .resource(PODS)
      .subresource('log')
      .getText({ namespace: NAMESPACE, name: pod }, { query });
  } catch (error) {
    // An answer that is not 2xx (no response at all is no HTTP status, and is rethrown as it is).
    if (!(error instanceof KubeApiError) || error.status === undefined) throw error;
    const said = error.statusMessage ?? error.message;
    throw new Error(`log of pod ${pod}: HTTP ${error.status}: ${said.trim()}`, { cause: error });
  }
  return readTimestampedLog(`log of pod ${pod}`, text);
}

interface Pod extends KubeObject {
  spec: { nodeName?: string };
  status?: {
    containerStatuses?: { name: string; state?: { terminated?: { exitCode: number } } }[];
  };
}

export interface ContainerRun {
  pod: string;
  /** Where it ran; undefined where no kubelet took the pod (somebody played kubelet for it). */
  nodeName: string | undefined;
  exitCode: number | undefined;
  /** Its log, when a kubelet has one. */
  output: string | undefined;
}

export async function readContainerRun(
  client: KubeClient,
  pod: string,
  container: string,
): Promise<ContainerRun | undefined> {
  const found = await client.resource<Pod>(PODS).getOptional({ namespace: NAMESPACE, name: pod });
  if (!found) return undefined;
  const { nodeName } = found.spec;
  const status = found.status?.containerStatuses?.find((c) => c.name === container);
  const output = nodeName ? await podLog(client, pod, container).catch(() => undefined) : undefined;
  return { pod, nodeName, exitCode: status?.state?.terminated?.exitCode, output };
}
