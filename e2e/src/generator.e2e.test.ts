/**
 * The controller generator end to end, as a user meets it: `pnpm nx g @loopwright/nx-plugin:controller`
 * in a copy of this workspace (every file of the working tree that git tracks or does not ignore, as it
 * is now), then, with no edit in between, that copy's own `pnpm test` for the new package (formatting,
 * Knip, typecheck, lint, its unit tests and its integration test against a real control plane), and its
 * chart and e2e suites for the new controller: the copy's e2e global setup reuses this run's node
 * (LOOPWRIGHT_NODE and KUBECONFIG, set by ours) and the cached helm and Prometheus, builds the copy's
 * images from the root Dockerfile and imports them, and the suite installs the new chart there. The copy
 * is removed afterwards.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from './charts.ts';

const NAME = 'gadget-keeper';
const GENERATE = [
  'nx',
  'g',
  '@loopwright/nx-plugin:controller',
  NAME,
  '--group',
  'gadgets.loopwright.dev',
  '--api-version',
  'v1alpha1',
  '--kind',
  'Gadget',
  '--owns',
  'ConfigMap',
  '--no-interactive',
];

interface Result {
  code: number | null;
  stdout: string;
  /** stdout and stderr interleaved, as a terminal shows them. */
  output: string;
}

/** Runs a command to its end. */
function run(command: string, args: readonly string[], cwd: string, input?: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: copyEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      resolve({ code, stdout, output });
    });
    child.stdin.end(input);
  });
}

/**
 * This process's environment with `CI=true`, as in a CI job (pnpm freezes the lockfile there by
 * default, and the generator's install must still link the new package), minus pnpm's variables of
 * the outer `pnpm run` and node:test's NODE_TEST_CONTEXT (a `node --test` that finds it runs no file,
 * taking itself for a test file's nested call). The node's variables stay: the copy's tests run on
 * this run's node.
 */
function copyEnv(): NodeJS.ProcessEnv {
  const inherited = ([key]: [string, unknown]) => key !== 'NODE_TEST_CONTEXT' && !/^(npm|pnpm)_/i.test(key);
  const env = Object.fromEntries(Object.entries(process.env).filter(inherited));
  // No Nx daemon: it would outlive the copy it watches. The copy's e2e run builds and imports the new
  // controller's image only: the other suites run on this node meanwhile, on the images this run built.
  return { ...env, CI: 'true', NX_DAEMON: 'false', LOOPWRIGHT_E2E_CONTROLLERS: NAME };
}

/**
 * Asserts a zero exit, with the command's output in the message otherwise (its last 20,000 characters);
 * resolves with the result.
 */
async function succeeds(command: string, args: readonly string[], cwd: string): Promise<Result> {
  const started = performance.now();
  const result = await run(command, args, cwd);
  const { code, output } = result;
  process.stderr.write(
    `[generator] ${command} ${args.join(' ')}: exit ${code}, ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  assert.equal(code, 0, `${command} ${args.join(' ')} in ${cwd}:\n${output.slice(-20_000)}`);
  return result;
}

/** node:test's summary counts (`ℹ pass 12`) in a run's output, added up over every summary in it. */
function testCounts(output: string): { pass: number; fail: number } {
  // Colours stripped: under Nx the copy's node:test inherits FORCE_COLOR and colours its summary.
  const plain = output.replace(new RegExp(String.raw`\u001b\[[0-9;]*m`, 'g'), '');
  const count = (what: string) =>
    [...plain.matchAll(new RegExp(String.raw`^\s*ℹ ${what} (\d+)\s*$`, 'gm'))].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
  return { pass: count('pass'), fail: count('fail') };
}

describe('the controller generator, in a copy of the workspace', () => {
  let copy: string;

  before(async () => {
    copy = await mkdtemp(join(tmpdir(), 'loopwright-generator-'));
    const { stdout: listed } = await succeeds(
      'git',
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
      repoRoot,
    );
    // A tracked file deleted in the working tree is listed but gone: the copy has it gone too.
    const files = listed.split('\0').filter((file) => file && existsSync(join(repoRoot, file)));
    const archive = join(copy, '.workspace.tar');
    const packed = await run('tar', ['-cf', archive, '--null', '-T', '-'], repoRoot, files.join('\0'));
    assert.equal(packed.code, 0, packed.output);
    await succeeds('tar', ['-xf', archive], copy);
    await rm(archive);
    await succeeds('pnpm', ['install', '--offline'], copy);
  });

  after(async () => {
    if (copy) await rm(copy, { recursive: true, force: true });
  });

  test('generates the controller, whose package, chart and e2e suites then pass with no edit', async () => {
    await succeeds('pnpm', GENERATE, copy);
    for (const file of [
      `packages/${NAME}/src/main.ts`,
      `packages/${NAME}/src/config.ts`,
      `packages/${NAME}/src/generated/types.ts`,
      `charts/${NAME}/crds/gadgets.gadgets.loopwright.dev.yaml`,
      `e2e/src/${NAME}.chart.test.ts`,
      `e2e/src/${NAME}.e2e.test.ts`,
      `e2e/expected/${NAME}.rbac.json`,
      `e2e/expected/${NAME}.effective-rules.json`,
    ])
      assert.ok(existsSync(join(copy, file)), `the generator wrote no ${file}`);
    // The chart has only its own templates, and takes the rest from the library chart it links.
    assert.deepEqual(readdirSync(join(copy, `charts/${NAME}/templates`)).sort(), [
      'NOTES.txt',
      '_helpers.tpl',
      'controller.yaml',
    ]);
    assert.equal(
      readlinkSync(join(copy, `charts/${NAME}/charts/loopwright-controller`)),
      '../../loopwright-controller',
    );

    // Formatting and Knip over the whole copy, then typecheck, lint and test of the new package.
    const { output: unit } = await succeeds(
      'pnpm',
      // static: the tasks' output, whose node:test counts the summary line adds up, is shown even on success.
      ['test', `--projects=@loopwright/${NAME}`, '--output-style=static'],
      copy,
    );
    const summary = /Tests: (\d+) passed, (\d+) failed/.exec(unit);
    assert.ok(summary && Number(summary[1]) > 0 && summary[2] === '0', unit.slice(-5_000));

    // The e2e package's own test command, for the new controller's two files only.
    const { output: e2e } = await succeeds(
      process.execPath,
      [
        '--conditions=development',
        '--test',
        '--test-global-setup=./global-setup.ts',
        `src/${NAME}.chart.test.ts`,
        `src/${NAME}.e2e.test.ts`,
      ],
      join(copy, 'e2e'),
    );
    const counts = testCounts(e2e);
    assert.ok(counts.pass > 0 && counts.fail === 0, e2e.slice(-5_000));
  });
});
