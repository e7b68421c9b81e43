/**
 * The summary line about the At, worded after what really happened to its pod: run by a kubelet on a
 * node (with its exit code and output), or only reported finished by the demo playing kubelet. Pure.
 */
import type { ContainerRun } from './pods.ts';

export function atSummary(name: string, run: ContainerRun | undefined, kubeletPlayed: boolean): string {
  if (!run) return `At ${name}: DONE, but its pod is gone already`;
  if (kubeletPlayed)
    return (
      `At ${name}: its pod ${run.pod} was created once, when it was due; no kubelet here, so the demo ` +
      `reported it finished (exit code ${run.exitCode ?? '?'}) and the command itself did not run`
    );
  const exit = `exit code ${run.exitCode ?? '?'}`;
  if (!run.nodeName)
    return `At ${name}: its pod ${run.pod} was created once, when it was due, and finished with ${exit}`;
  const output = run.output === undefined ? '' : `, output ${JSON.stringify(run.output.trim())}`;
  return `At ${name}: its command ran once, when it was due, in pod ${run.pod} on node ${run.nodeName}: ${exit}${output}`;
}
