/**
 * `pnpm mutate [package...] [stryker options]`: mutation testing with StrykerJS for every package that
 * has a stryker.config.json (its `mutate` list names the files, its command the tests that must kill
 * their mutants), or only for the named ones (`workqueue` or `@loopwright/workqueue`). Packages run one
 * after the other, as each run already keeps every core busy. Options such as `--incremental` or
 * `--concurrency 4` go to every run. Ends with one line per package (mutation score, mutants by status,
 * wall time) and exits 1 if a run failed or a score fell under its config's `thresholds.break`.
 *
 * With `--incremental`, note that the command test runner reports no per-test coverage: Stryker then
 * reuses every earlier result of unchanged code, so a new test kills nothing until a run without it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startControlPlane, type ControlPlane } from '@loopwright/envtest';
import { formatSummary, mutationCounts, type MutationReport, type PackageResult } from './mutate/summary.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const packagesDir = join(repoRoot, 'packages');

interface StrykerConfig {
  commandRunner?: { command?: string };
  jsonReporter?: { fileName?: string };
}

// Package names first; from the first option on, everything (values included) is Stryker's.
const args = process.argv.slice(2);
const firstOption = args.findIndex((arg) => arg.startsWith('-'));
const strykerOptions = firstOption === -1 ? [] : args.slice(firstOption);
const requested = (firstOption === -1 ? args : args.slice(0, firstOption)).map((name) =>
  name.replace(/^@loopwright\//, ''),
);

const configured = readdirSync(packagesDir).filter((name) =>
  existsSync(join(packagesDir, name, 'stryker.config.json')),
);
const unknown = requested.filter((name) => !configured.includes(name));
if (unknown.length > 0) {
  console.error(
    `No stryker.config.json in packages/${unknown.join(', packages/')}; have: ${configured.join(', ')}`,
  );
  process.exit(2);
}
const selected = requested.length > 0 ? requested : configured;

const configs = new Map(
  selected.map((name) => {
    const path = join(packagesDir, name, 'stryker.config.json');
    return [name, JSON.parse(readFileSync(path, 'utf8')) as StrykerConfig];
  }),
);

// A test command with envtest's global setup would start a control plane per mutant; one
// for the whole run is reused by every global setup (LOOPWRIGHT_CONTROLPLANE), as `pnpm controlplane up`
// would be. Started for the first package that needs it.
let controlPlane: ControlPlane | undefined;
async function ensureControlPlane(): Promise<void> {
  if (process.env.LOOPWRIGHT_CONTROLPLANE === '1' && process.env.KUBECONFIG) return;
  controlPlane = await startControlPlane({ log: (line) => process.stderr.write(`[controlplane] ${line}\n`) });
  process.env.KUBECONFIG = controlPlane.kubeconfigPath;
  process.env.LOOPWRIGHT_CONTROLPLANE = '1';
}

// Ctrl-C reaches Stryker through the terminal; a signal sent to this process alone is passed on. Either
// way no further package starts, and the control plane stops.
let stryker: ChildProcess | undefined;
const interruption = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interruption.abort();
    stryker?.kill(signal);
  });
}

const results: PackageResult[] = [];
try {
  for (const [name, config] of configs) {
    if (config.commandRunner?.command?.includes('--test-global-setup')) await ensureControlPlane();
    if (interruption.signal.aborted) break;
    const cwd = join(packagesDir, name);
    const reportPath = resolve(cwd, config.jsonReporter?.fileName ?? 'reports/mutation/mutation.json');
    // A report left by an earlier run must not pass for this run's.
    rmSync(reportPath, { force: true });
    console.log(`\n== ${name}: stryker run ${strykerOptions.join(' ')}`);
    const started = performance.now();
    stryker = spawn('stryker', ['run', ...strykerOptions], { cwd, stdio: 'inherit' });
    const [code] = (await once(stryker, 'exit')) as [number | null];
    const seconds = (performance.now() - started) / 1000;
    const counts = existsSync(reportPath)
      ? mutationCounts(JSON.parse(readFileSync(reportPath, 'utf8')) as MutationReport)
      : undefined;
    results.push({ name, counts, seconds, passed: code === 0 });
  }
} finally {
  await controlPlane?.stop();
}

console.log(`\n${formatSummary(results)}`);
if (interruption.signal.aborted) process.exit(130);
process.exit(results.every((result) => result.passed) ? 0 : 1);
