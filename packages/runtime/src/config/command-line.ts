/**
 * A controller's command line, read before anything else runs: `--help` and `--version` win when they
 * come first; every other argument must be a declared flag, as `--flag value` or `--flag=value` (Go's
 * bool flags take no separate value: `--leader-elect`, `--leader-elect=false`).
 */
import { ConfigError } from './config-error.ts';
import type { OptionSet } from './option.ts';

export type CommandLine =
  | { readonly action: 'help' }
  | { readonly action: 'version' }
  /** Each given flag's values in order; a repeated flag keeps them all (see `resolveOptions`). */
  | { readonly action: 'run'; readonly flags: ReadonlyMap<string, readonly string[]> };

/**
 * @throws ConfigError naming an unknown argument (by name only: the value of a mistyped flag may be a
 * secret) or a flag without its value.
 */
export function parseCommandLine(argv: readonly string[], optionSets: readonly OptionSet[]): CommandLine {
  const booleans = new Set<string>();
  const takingValues = new Set<string>();
  for (const declared of optionSets.flatMap((options) => Object.values(options))) {
    if (declared.type === 'secret') takingValues.add(declared.fileFlag);
    else (declared.kind.boolean ? booleans : takingValues).add(declared.flag);
  }
  const flags = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') return { action: 'help' };
    if (arg === '--version') return { action: 'version' };
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!booleans.has(name) && !takingValues.has(name)) throw new ConfigError(name, 'unknown argument');
    const value = eq > 0 ? arg.slice(eq + 1) : booleans.has(name) ? 'true' : argv[++i];
    if (value === undefined) throw new ConfigError(name, 'needs a value');
    flags.set(name, [...(flags.get(name) ?? []), value]);
  }
  return { action: 'run', flags };
}
