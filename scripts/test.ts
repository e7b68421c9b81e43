/**
 * `pnpm test`: formatting and Knip (unused files, exports, dependencies), then typecheck, lint and every
 * test suite of every package through Nx (the whole workspace's typecheck and lint as one program each),
 * then one summary line adding up node:test's per-package counts (Nx replays cached output, so cached
 * runs count too) and one with each phase's time. A formatting or
 * Knip failure fails the run but does not skip the tests.
 */
import { spawn, spawnSync } from 'node:child_process';

const started = performance.now();
const phases: string[] = [];
function timed<T>(phase: string, run: () => T): T {
  const phaseStarted = performance.now();
  const result = run();
  phases.push(`${phase} ${seconds(performance.now() - phaseStarted)}`);
  return result;
}
function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

const format = timed('formatting', () =>
  spawnSync('pnpm', ['exec', 'prettier', '--check', '--log-level=warn', '.'], { stdio: 'inherit' }),
);
if (format.status !== 0) console.error('Formatting differs from Prettier: run `pnpm format`.\n');

// Knip reads the whole workspace in one pass (a couple of seconds): as an Nx target its inputs would
// be every file of every package, so it would rarely hit the cache and runs here instead.
const knip = timed('Knip', () => spawnSync('pnpm', ['exec', 'knip', '--no-progress'], { stdio: 'inherit' }));
if (knip.status !== 0) console.error('Knip found unused files, exports or dependencies: run `pnpm knip`.\n');
const nxStarted = performance.now();

const given = process.argv.slice(2);
// The whole workspace is type-checked and linted as one program (the root's typecheck-all and lint-all:
// each package's own typecheck and lint would check the runtime's sources again in every program that
// reaches them, about twice the CPU); some projects only, with their own targets.
const checks = given.some((arg) => arg.startsWith('--projects'))
  ? ['typecheck', 'lint']
  : ['typecheck-all', 'lint-all'];
const args = ['run-many', '-t', ...checks, 'test', ...given];
// The totals are read from each task's output, and Nx prints a passing task's only in the static style
// (its default hides it, in a terminal or not): without it the summary would count only failures.
if (!args.some((arg) => arg.startsWith('--output-style'))) args.push('--output-style=static');
// pnpm exports this to scripts; Nx runs each target with a nested `pnpm run`, which, seeing it,
// engine-checks every workspace package against the system Node and floods the log with warnings.
const env = { ...process.env };
delete env.pnpm_config_verify_deps_before_run;
const nx = spawn('nx', args, { stdio: ['inherit', 'pipe', 'inherit'], env });

const totals = { pass: 0, fail: 0, skipped: 0 };
let pending = '';
const ansi = new RegExp(String.raw`\u001b\[[0-9;]*m`, 'g');
nx.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const match = /^\s*ℹ (pass|fail|skipped) (\d+)\s*$/.exec(line.replace(ansi, ''));
    if (match?.[1] && match[2]) totals[match[1] as keyof typeof totals] += Number(match[2]);
  }
});

nx.on('exit', (code, signal) => {
  console.log(`\nTests: ${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped`);
  phases.push(`typecheck, lint and tests ${seconds(performance.now() - nxStarted)}`);
  console.log(`Time: ${seconds(performance.now() - started)} (${phases.join(', ')})`);
  const nxFailed = code !== 0 || signal !== null;
  process.exit(nxFailed || format.status !== 0 || knip.status !== 0 ? 1 : 0);
});
