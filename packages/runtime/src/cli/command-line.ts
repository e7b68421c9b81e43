/**
 * A controller's command line, handled before anything else runs: `--help` and `--version` print to
 * stdout and exit 0, a bad argument is one line on stderr and exit 2, all without reading the
 * configuration or touching a cluster. Everything else is configured by environment variables.
 */
import { formatHelp } from './help.ts';
import { readPackageInfo } from './package-info.ts';
import type { Program, ValueFlag } from './program.ts';

export type CommandLine =
  | { readonly action: 'run'; readonly flags: ReadonlyMap<string, string> }
  | { readonly action: 'help' }
  | { readonly action: 'version' }
  | { readonly action: 'usage-error'; readonly message: string };

/**
 * Reads `argv` left to right: the first `--help`/`-h` or `--version` decides, and any argument that is
 * not a declared flag with its value is an error. A repeated flag keeps its last value. An unknown
 * `--name=value` is reported by its name only: the value might be a secret.
 */
export function parseCommandLine(argv: readonly string[], flags: readonly ValueFlag[] = []): CommandLine {
  const declared = new Set<string>(flags.map((flag) => flag.name));
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') return { action: 'help' };
    if (arg === '--version') return { action: 'version' };
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!declared.has(name)) return { action: 'usage-error', message: `unknown argument "${name}"` };
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) return { action: 'usage-error', message: `${name} needs a value` };
    values.set(name, value);
  }
  return { action: 'run', flags: values };
}

/** Where {@link runCommandLine} writes and how it ends the process; tests pass their own. */
export interface CommandLineOutput {
  stdout(text: string): void;
  stderr(text: string): void;
  exit(code: number): never;
}

const processOutput: CommandLineOutput = {
  stdout: (text) => {
    process.stdout.write(text);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
  exit: (code) => process.exit(code),
};

/**
 * Handles `--help`, `--version` and bad arguments (exiting), else returns the declared flags' values
 * by flag name, for the config parser.
 */
export function runCommandLine(
  program: Program,
  argv: readonly string[] = process.argv.slice(2),
  output: CommandLineOutput = processOutput,
): ReadonlyMap<string, string> {
  const commandLine = parseCommandLine(argv, program.flags);
  if (commandLine.action === 'run') return commandLine.flags;
  const info = readPackageInfo(program.packageJson);
  switch (commandLine.action) {
    case 'help':
      output.stdout(formatHelp(program, info));
      return output.exit(0);
    case 'version':
      output.stdout(`${info.name} ${info.version}\n`);
      return output.exit(0);
    case 'usage-error':
      output.stderr(`${info.name}: ${commandLine.message} (see --help)\n`);
      return output.exit(2);
  }
}
