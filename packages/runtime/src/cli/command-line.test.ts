import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { parseCommandLine, runCommandLine, type CommandLineOutput } from './command-line.ts';
import type { Program, ValueFlag } from './program.ts';

const FLAGS: ValueFlag[] = [
  { name: '--node-selector', variable: 'NODE_SELECTOR' },
  { name: '--node-monitor-period', variable: 'NODE_MONITOR_PERIOD' },
];

describe('parseCommandLine', () => {
  it('no arguments: run with no flag values', () => {
    assert.deepEqual(parseCommandLine([]), { action: 'run', flags: new Map() });
  });

  it('declared flags take a value as `--flag value` or `--flag=value`; the last one wins', () => {
    assert.deepEqual(
      parseCommandLine(
        ['--node-selector', 'a=b', '--node-monitor-period=5s', '--node-selector=pool in (x,y)'],
        FLAGS,
      ),
      {
        action: 'run',
        flags: new Map([
          ['--node-selector', 'pool in (x,y)'],
          ['--node-monitor-period', '5s'],
        ]),
      },
    );
    assert.deepEqual(parseCommandLine(['--node-selector='], FLAGS), {
      action: 'run',
      flags: new Map([['--node-selector', '']]),
    });
  });

  it('--help, -h and --version win when they come first', () => {
    assert.deepEqual(parseCommandLine(['--help']), { action: 'help' });
    assert.deepEqual(parseCommandLine(['-h', '--bogus']), { action: 'help' });
    assert.deepEqual(parseCommandLine(['--version']), { action: 'version' });
    assert.deepEqual(parseCommandLine(['--node-selector', 'a', '--version'], FLAGS), { action: 'version' });
  });

  it('anything else is a usage error naming the argument', () => {
    const cases: [string[], string][] = [
      [['--bogus'], 'unknown argument "--bogus"'],
      [['serve'], 'unknown argument "serve"'],
      [['--bogus', '--help'], 'unknown argument "--bogus"'],
      [['-v'], 'unknown argument "-v"'],
      [['--help=yes'], 'unknown argument "--help"'],
      // Only the name: the value of a mistyped flag may be a secret.
      [['--token=s3cret'], 'unknown argument "--token"'],
      [['--node-selector'], '--node-selector needs a value'],
      [['-node-selector=a'], 'unknown argument "-node-selector=a"'],
    ];
    for (const [argv, message] of cases)
      assert.deepEqual(parseCommandLine(argv, FLAGS), { action: 'usage-error', message }, argv.join(' '));
    assert.deepEqual(parseCommandLine(['--node-selector=a'], []), {
      action: 'usage-error',
      message: 'unknown argument "--node-selector"',
    });
  });
});

describe('runCommandLine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'command-line-test-'));
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const packageJson = join(dir, 'package.json');
  writeFileSync(
    packageJson,
    JSON.stringify({ name: '@loopwright/example', version: '1.2.3', description: 'Does one thing well' }),
  );
  const program: Program = {
    packageJson: pathToFileURL(packageJson),
    variables: [{ name: 'NODE_SELECTOR', description: 'only matching Nodes' }],
    flags: FLAGS,
  };

  class Exit extends Error {
    readonly code: number;
    constructor(code: number) {
      super(`exit ${code}`);
      this.code = code;
    }
  }
  function run(argv: string[]): {
    stdout: string;
    stderr: string;
    exit: number | undefined;
    flags?: unknown;
  } {
    let stdout = '';
    let stderr = '';
    const output: CommandLineOutput = {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      exit: (code) => {
        throw new Exit(code);
      },
    };
    try {
      const flags = runCommandLine(program, argv, output);
      return { stdout, stderr, exit: undefined, flags };
    } catch (error) {
      if (!(error instanceof Exit)) throw error;
      return { stdout, stderr, exit: error.code };
    }
  }

  it('returns the flag values and prints nothing when the program should run', () => {
    assert.deepEqual(run(['--node-selector=a']), {
      stdout: '',
      stderr: '',
      exit: undefined,
      flags: new Map([['--node-selector', 'a']]),
    });
  });

  it('--version prints "<name> <version>" from package.json and exits 0', () => {
    assert.deepEqual(run(['--version']), { stdout: 'example 1.2.3\n', stderr: '', exit: 0 });
  });

  it('--help prints the help to stdout and exits 0', () => {
    const { stdout, stderr, exit } = run(['-h']);
    assert.equal(exit, 0);
    assert.equal(stderr, '');
    assert.match(stdout, /^example 1\.2\.3: Does one thing well\n/);
    assert.match(stdout, /^ {2}NODE_SELECTOR +only matching Nodes$/m);
  });

  it('a bad argument is one line on stderr naming it, exit 2', () => {
    assert.deepEqual(run(['--verbose']), {
      stdout: '',
      stderr: 'example: unknown argument "--verbose" (see --help)\n',
      exit: 2,
    });
    assert.deepEqual(run(['--node-monitor-period']), {
      stdout: '',
      stderr: 'example: --node-monitor-period needs a value (see --help)\n',
      exit: 2,
    });
  });
});
