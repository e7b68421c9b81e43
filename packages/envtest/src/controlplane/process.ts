import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** Every child still running, so a synchronous 'exit' hook can kill them if the caller never stops. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/**
 * One control-plane process: output captured to a log file, stopped with SIGTERM then SIGKILL, and
 * restartable (the fault suite's crashes) with the same command line, its output appended to the log.
 */
export class ManagedProcess {
  readonly name: string;
  readonly logPath: string;
  readonly #binary: string;
  readonly #args: string[];
  #child!: ChildProcess;
  #exited!: Promise<number | null>;
  #exitCode: number | null | undefined;

  constructor(name: string, binary: string, args: string[], logPath: string) {
    installExitHook();
    this.name = name;
    this.logPath = logPath;
    this.#binary = binary;
    this.#args = args;
    this.#spawn('w');
  }

  #spawn(logFlags: 'w' | 'a'): void {
    this.#exitCode = undefined;
    const log = createWriteStream(this.logPath, { flags: logFlags });
    this.#child = spawn(this.#binary, this.#args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Our Go mains set PR_SET_PDEATHSIG when they see this: they die with us even on SIGKILL.
      env: { ...process.env, LOOPWRIGHT_EXIT_WITH_PARENT: '1' },
    });
    this.#child.stdout?.pipe(log, { end: false });
    this.#child.stderr?.pipe(log, { end: false });
    const child = this.#child;
    running.add(child);
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        this.#exitCode = code ?? (signal ? null : code);
        log.end();
        resolve(code);
      });
      child.once('error', (error) => {
        running.delete(child);
        log.end(`spawn failed: ${error.message}\n`);
        this.#exitCode = -1;
        resolve(-1);
      });
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** True once the process has exited, for whatever reason. */
  get exited(): boolean {
    return this.#exitCode !== undefined;
  }

  /** The last lines of the process's output, to explain a failure. */
  async tail(lines = 30): Promise<string> {
    const text = await readFile(this.logPath, 'utf8').catch(() => '');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  }

  /**
   * Sends `signal` (SIGKILL: a crash, nothing flushed; SIGTERM: a graceful stop), waits for the exit,
   * and starts the same command again. Resolves once the new process is spawned, not once it is healthy.
   */
  async restart(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    if (!this.exited) {
      this.#child.kill(signal);
      await this.#exited;
    }
    this.#spawn('a');
  }

  /** Graceful stop: SIGTERM, then SIGKILL after the grace period. Resolves when the process is gone. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.exited) return;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }
}
