/**
 * `pnpm nx serve <controller>` restarts when the workspace's own sources change, and only then: not
 * when a file under node_modules that the program loads gets an attribute change (pnpm hard-linking
 * the same store file elsewhere, a read, an atime update). Each controller's real `serve` script runs
 * through pnpm with `--help`, so the program prints its help and exits without a cluster, and Node's
 * watch mode waits.
 */
import { workspaceControllers, type WorkspaceController } from '@loopwright/cluster';
import { eventually } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { linkSync, mkdtempSync, readFileSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { serveScript, serveWatchPaths } from './serve/watch-paths.ts';

const repoRoot = join(import.meta.dirname, '..');

/** Well above the 200 ms for which Node's watch mode gathers changes before it restarts. */
const QUIET_WINDOW_MS = 1_500;
/** Rounds of dependency-file events that concurrent edits of watched sources may spoil. */
const ROUNDS = 6;

/** Records, at exit, every file the program loaded (ESM and CommonJS) in $LOADED_FILES, one per line. */
const RECORD_LOADED_FILES = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const loaded = new Set();
registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('file:')) loaded.add(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => writeFileSync(process.env.LOADED_FILES, [...loaded].join('\\n')));
`)}`;

interface Manifest {
  scripts: Record<string, string>;
  dependencies?: Record<string, string>;
}

function manifest(controller: WorkspaceController): Manifest {
  return JSON.parse(readFileSync(join(controller.packageDir, 'package.json'), 'utf8')) as Manifest;
}

/** The absolute directories the controller's serve script should watch. */
function watchedDirs(controller: WorkspaceController): string[] {
  return serveWatchPaths(controller.packageDir, manifest(controller).dependencies).map((path) =>
    resolve(controller.packageDir, path),
  );
}

function isUnder(file: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => file.startsWith(dir + sep));
}

/** Every file `src/main.ts --help` loads, as serve's Node runs it (the development condition). */
function loadedFiles(controller: WorkspaceController): string[] {
  const scratch = mkdtempSync(join(tmpdir(), 'serve-watch-loaded-'));
  try {
    const list = join(scratch, 'loaded-files');
    const run = spawnSync(
      process.execPath,
      ['--conditions=development', `--import=${RECORD_LOADED_FILES}`, 'src/main.ts', '--help'],
      { cwd: controller.packageDir, env: { ...process.env, LOADED_FILES: list }, encoding: 'utf8' },
    );
    assert.equal(run.status, 0, run.stderr);
    return readFileSync(list, 'utf8')
      .split('\n')
      .map((url) => fileURLToPath(url));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function inNodeModules(file: string): boolean {
  return file.includes(`${sep}node_modules${sep}`);
}

interface Serve {
  process: ChildProcess;
  /** What Node's watch mode printed so far (runs, changes, restarts), without the program's output. */
  watchModeLines(): string[];
}

/** The files Node's watch mode named, in `lines`, as the change that restarted the program. */
function triggers(lines: readonly string[]): string[] {
  return lines.flatMap((line) => /^Change detected in '(.*)'$/.exec(line)?.[1] ?? []);
}

/** Waits until serve's program has run and Node's watch mode waits for changes; its lines so far. */
async function waitingForChanges(serve: Serve): Promise<string[]> {
  let lines: string[] = [];
  await eventually(
    () => {
      lines = serve.watchModeLines();
      assert.match(lines.at(-1) ?? '', /^(Completed|Failed) running /, 'serve is not waiting for changes');
    },
    { timeoutMs: 30_000 },
  );
  return lines;
}

// Colours, and the reset (ESC c) that clears the screen before a restart when colours are on: under Nx
// (FORCE_COLOR) it starts the line that names the change.
const ansi = new RegExp(String.raw`\u001b(?:\[[0-9;?]*[A-Za-z]|c)`, 'g');

/** `pnpm run serve --help` in the controller's package, in a process group of its own. */
function startServe(controller: WorkspaceController): Serve {
  const env = { ...process.env };
  // As scripts/test.ts: a nested `pnpm run` that sees this engine-checks the workspace on every start.
  delete env.pnpm_config_verify_deps_before_run;
  const child = spawn('pnpm', ['run', 'serve', '--help'], {
    cwd: controller.packageDir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  for (const stream of [child.stdout, child.stderr])
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk.replace(ansi, '');
    });
  return {
    process: child,
    watchModeLines: () =>
      text
        .split('\n')
        .filter((line) => /^(Completed running|Failed running|Change detected|Restarting) /.test(line)),
  };
}

/** Stops pnpm, Node's watcher and the program: the whole process group, and waits until it is gone. */
async function stopServe({ process: child }: Serve): Promise<void> {
  const group = child.pid;
  if (group === undefined) return;
  const alive = () => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };
  const signal = (name: NodeJS.Signals) => {
    if (alive()) process.kill(-group, name);
  };
  signal('SIGTERM');
  try {
    await eventually(
      () => {
        assert.ok(!alive(), 'the serve process group is still running');
      },
      { timeoutMs: 5_000 },
    );
  } catch {
    signal('SIGKILL');
  }
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
}

/** `touch -a` the files: their access time (and so their inode's change time), nothing else. */
function touchAccessTime(files: readonly string[]): void {
  const touch = spawnSync('touch', ['-a', '--', ...files], { encoding: 'utf8' });
  assert.equal(touch.status, 0, touch.stderr);
}

describe('pnpm nx serve <controller>', () => {
  for (const controller of workspaceControllers(repoRoot)) {
    describe(controller.name, () => {
      it('watches its own src and the src of every workspace package it depends on, transitively', () => {
        const { scripts, dependencies } = manifest(controller);
        assert.equal(scripts.serve, serveScript(serveWatchPaths(controller.packageDir, dependencies)));
      });

      it('watches every workspace source the program loads', () => {
        const sources = loadedFiles(controller).filter((file) => !inNodeModules(file));
        assert.ok(sources.includes(join(controller.packageDir, 'src', 'main.ts')));
        assert.deepEqual(
          sources.filter((file) => !isUnder(file, watchedDirs(controller))),
          [],
        );
      });

      it(
        'does not restart on hard links, reads or access-time changes of the dependencies it loads; restarts on a touch of src/main.ts',
        { timeout: 180_000 },
        async (t) => {
          const dependencyFiles = loadedFiles(controller).filter(inNodeModules);
          assert.ok(dependencyFiles.length > 0, 'the program loads files from node_modules');
          const watched = watchedDirs(controller);
          const main = join(controller.packageDir, 'src', 'main.ts');

          // After hooks run in the order registered: serve stops first.
          const serve = startServe(controller);
          t.after(() => stopServe(serve));
          // Beside node_modules/.pnpm, so that a hard link to its files stays on their file system.
          const links = mkdtempSync(join(repoRoot, 'node_modules', '.serve-watch-links-'));
          t.after(() => {
            rmSync(links, { recursive: true, force: true });
          });
          const reported = new Set<string>();
          const watchers = dependencyFiles.map((file) =>
            watch(file, () => reported.add(file)).on('error', () => undefined),
          );
          t.after(() => {
            for (const watcher of watchers) watcher.close();
          });

          // Someone editing a watched source meanwhile (the runtime, say) restarts serve, and plain
          // `node --watch` ignores the stopped run's modules until the new run loads them: such a round
          // proves nothing, so another follows.
          for (let round = 1; ; round++) {
            const before = await waitingForChanges(serve);
            reported.clear();
            dependencyFiles.forEach((file, index) => {
              linkSync(file, join(links, `${round}-${index}`));
              readFileSync(file);
            });
            touchAccessTime(dependencyFiles);
            // Once this process has been told of every file's change, so has Node's watcher, if it watches.
            await eventually(
              () => {
                assert.deepEqual(
                  dependencyFiles.filter((file) => !reported.has(file)),
                  [],
                  'files whose hard link or access time change fs.watch did not report',
                );
              },
              { timeoutMs: 15_000 },
            );
            await sleep(QUIET_WINDOW_MS);
            const during = serve.watchModeLines().slice(before.length);
            assert.deepEqual(
              triggers(during).filter((file) => !isUnder(file, watched)),
              [],
              `serve restarted for files outside the workspace sources:\n${during.join('\n')}`,
            );
            if (during.length === 0) break;
            assert.ok(
              round < ROUNDS,
              `watched sources changed during all ${ROUNDS} rounds:\n${during.join('\n')}`,
            );
            t.diagnostic(
              `round ${round} proved nothing, a watched source changed: ${triggers(during).join(', ')}`,
            );
          }

          // Touched again until a restart names it: a concurrent edit within the debounce would name itself.
          // Its modification time only, left so: setting it back could undo an edit made meanwhile.
          const before = serve.watchModeLines().length;
          await eventually(
            () => {
              if (triggers(serve.watchModeLines().slice(before)).includes(main)) return;
              assert.equal(spawnSync('touch', ['-m', '--', main]).status, 0);
              assert.fail(
                `serve did not restart when src/main.ts was touched:\n${serve.watchModeLines().join('\n')}`,
              );
            },
            { timeoutMs: 15_000, intervalMs: 1_000 },
          );
        },
      );
    });
  }
});
