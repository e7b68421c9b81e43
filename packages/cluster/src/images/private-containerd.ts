/**
 * A throwaway containerd for the image tests: the node's private containerd (node/containerd.ts) with
 * the CRI plugin off, in a temporary directory; these tests run containers with ctr, not a kubelet.
 * `stop()` leaves nothing behind: no containerd or shim process, no mount under the directory, no
 * directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ctr, killShims, startContainerd } from '../node/containerd.ts';
import { unmountUnder } from '../node/machine.ts';
import { assertNodeCanStart } from '../node/requirements.ts';

export interface PrivateContainerd {
  address: string;
  /** Runs `ctr` against this containerd in the `k8s.io` namespace; its standard output. */
  ctr(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

/** Why this machine cannot run the containerd tests (the node's requirements), or undefined. */
export function containerdUnavailableReason(): string | undefined {
  try {
    assertNodeCanStart();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export async function startPrivateContainerd(): Promise<PrivateContainerd> {
  const dir = await mkdtemp(join(tmpdir(), 'loopwright-containerd-'));
  // Not the node's socket name: a node that stops kills every shim of that name, and must not kill ours.
  const address = join(dir, 'containerd.sock');
  const stop = async (): Promise<void> => {
    // Tasks still running (a failed test's) die with their shims.
    await daemon?.stop();
    await killShims(address);
    await unmountUnder(dir);
    await rm(dir, { recursive: true, force: true });
  };
  let daemon: Awaited<ReturnType<typeof startContainerd>> | undefined;
  try {
    daemon = await startContainerd({ dir, socket: address }, 20_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { address, ctr: (...args) => ctr(address, ...args), stop };
}
