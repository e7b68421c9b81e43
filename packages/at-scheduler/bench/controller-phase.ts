/**
 * The controller's side of a run: at-scheduler, configured as the released program is (its option
 * declarations' defaults, or the environment variables the program itself reads), with its real event
 * recorder, watching one fresh namespace; in a process of its own (bench/controller-process.ts, bundled
 * as the image's program is), while this process creates the Ats.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeClient } from '@loopwright/runtime';
import { fork, type ChildProcess } from 'node:child_process';
import { profileApiServer } from './apiserver-profile.ts';
import { benchNamespace, createAts, windowSchedules, type SetUp } from './ats.ts';
import type {
  ControllerProcessOutcome,
  ControllerRun,
  OutcomeMessage,
  WindowMessage,
} from './controller-process.ts';
import type { ControllerSettings } from './controller-settings.ts';

export interface ControllerOutcome extends Omit<ControllerProcessOutcome, 'idleMs'> {
  setUp: SetUp;
}

export interface ControllerPhaseOptions {
  /** The controller's process to fork: bench/controller-process.ts, bundled (bench/controller-bundle.ts). */
  main: string;
  kc: KubeConfig;
  kubeconfigPath: string;
  admin: KubeClient;
  settings: ControllerSettings;
  n: number;
  windowMs: number;
  /** From the controller's start until the window opens: time to create the Ats and for the controller to record them. */
  leadMs: number;
}

export async function runControllerPhase(options: ControllerPhaseOptions): Promise<ControllerOutcome> {
  const { kc, admin, settings, n, windowMs, leadMs } = options;
  const namespace = await benchNamespace(kc, 'bench-controller');
  // Its output goes to this process's; its CPU affinity is this process's (the contenders' CPUs).
  const child = fork(options.main, {
    execArgv: process.execArgv,
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  try {
    const mailbox = messagesFrom(child);
    const run: ControllerRun = {
      kubeconfigPath: options.kubeconfigPath,
      namespace,
      settings,
      n,
      windowMs,
      leadMs,
    };
    child.send(run);
    const { startMs, windowOpenMs } = await mailbox.next<WindowMessage>('window');
    const apiServerProfile = profileApiServer(
      admin,
      process.env.AT_BENCH_APISERVER_PROFILE,
      `apiserver-controller-n${n}-${windowOpenMs}`,
      windowOpenMs,
    );
    await createAts(admin, namespace, windowSchedules(n, windowOpenMs, windowMs));
    const createdMs = Date.now();
    const { outcome } = await mailbox.next<OutcomeMessage>('outcome');
    await apiServerProfile;
    const { idleMs, ...rest } = outcome;
    return { ...rest, setUp: { startMs, createdMs, idleMs, windowOpenMs } };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill();
    await exited;
  }
}

/**
 * The child's messages, kept from the moment of the call so that none is missed, with `next(kind)`
 * resolving with the first of that kind; rejects if the child exits before sending it.
 */
function messagesFrom(child: ChildProcess) {
  const received: { kind: string }[] = [];
  let exit: string | undefined;
  const wake = new Set<() => void>();
  const notify = (): void => {
    for (const waiter of wake) waiter();
  };
  child.on('message', (message: { kind: string }) => {
    received.push(message);
    notify();
  });
  child.once('exit', (code, signal) => {
    exit = signal ?? `code ${code}`;
    notify();
  });
  return {
    next<T extends { kind: string }>(kind: T['kind']): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = (): void => {
          const index = received.findIndex((message) => message.kind === kind);
          if (index >= 0) {
            wake.delete(check);
            resolve(received.splice(index, 1)[0] as T);
          } else if (exit !== undefined) {
            wake.delete(check);
            reject(new Error(`the controller process exited (${exit}) before it sent '${kind}'`));
          }
        };
        wake.add(check);
        check();
      });
    },
  };
}
