/**
 * Option declarations: one per setting, naming its flag; the environment variable is derived from the
 * flag by one rule (upper case, dashes to underscores: `--leader-election-id` is `LEADER_ELECTION_ID`).
 * A declaration is all the parser, `--help` and the README tables know, so none of them can drift.
 */
import type { ValueKind } from './kinds.ts';

/** `--leader-election-id` -> `LEADER_ELECTION_ID`. */
export function variableOf(flag: `--${string}`): string {
  return flag.slice(2).toUpperCase().replaceAll('-', '_');
}

interface OptionSpec {
  readonly flag: `--${string}`;
  /** One line: what it sets (the kind says what values it takes). */
  readonly description: string;
  /** The raw text that behaves exactly like leaving the option unset. */
  readonly default?: string;
  /** Unset is an error. */
  readonly required?: true;
  /** Without a default: what leaving it unset means, for `--help` and the README (`all namespaces`). */
  readonly unset?: string;
}

/** A flag with its environment variable twin, taking a value of one {@link ValueKind}. */
export interface Option<T> {
  readonly type: 'option';
  readonly flag: `--${string}`;
  readonly variable: string;
  readonly kind: ValueKind<NonNullable<T>>;
  readonly description: string;
  readonly default: string | undefined;
  readonly required: boolean;
  readonly unset: string | undefined;
  /** The value when neither the flag nor the variable is set: the parsed default, else undefined. */
  readonly valueWhenUnset: T;
}

export function option<T>(
  kind: ValueKind<T>,
  spec: OptionSpec & ({ default: string } | { required: true }),
): Option<T>;
export function option<T>(kind: ValueKind<T>, spec: OptionSpec): Option<T | undefined>;
export function option<T>(kind: ValueKind<T>, spec: OptionSpec): Option<T | undefined> {
  const parsedDefault = spec.default === undefined ? undefined : kind.parse(spec.default);
  // A declaration mistake, found when the module loads (every test imports it), not by a user.
  if (spec.default !== undefined && parsedDefault === undefined)
    throw new TypeError(`${spec.flag}: default "${spec.default}" is not ${kind.expected}`);
  return {
    type: 'option',
    flag: spec.flag,
    variable: variableOf(spec.flag),
    kind: kind as ValueKind<NonNullable<T>>,
    description: spec.description,
    default: spec.default,
    required: spec.required === true,
    unset: spec.unset,
    valueWhenUnset: parsedDefault,
  };
}

/**
 * A secret, such as an API token: from a file (`--<name>-file` / `<NAME>_FILE`, re-read when it changes,
 * as a Secret volume the kubelet updates), or from the variable `<NAME>` itself. There is no flag for the
 * value: a command line is visible to every process on the machine. Always required.
 */
export interface SecretOption {
  readonly type: 'secret';
  /** The variable holding the value itself, e.g. `HCLOUD_TOKEN`. */
  readonly variable: string;
  readonly fileFlag: `--${string}`;
  readonly fileVariable: string;
  readonly description: string;
  /** The error's "expected ..." part for a malformed value (which is never echoed). */
  readonly expected: string;
  readonly valid: (value: string) => boolean;
  /**
   * Both variables set: `refuse` (the default: exit 2 naming both), or `variable` (the value itself
   * wins and the file is not read, as a program this one replaces did it: HCCM's LookupEnvWithFile).
   */
  readonly whenBothSet: 'refuse' | 'variable';
}

export function secret(spec: {
  readonly fileFlag: `--${string}-file`;
  readonly description: string;
  readonly expected: string;
  readonly valid: (value: string) => boolean;
  readonly whenBothSet?: 'refuse' | 'variable';
}): SecretOption {
  const fileVariable = variableOf(spec.fileFlag);
  return {
    type: 'secret',
    variable: fileVariable.replace(/_FILE$/, ''),
    fileFlag: spec.fileFlag,
    fileVariable,
    description: spec.description,
    expected: spec.expected,
    valid: spec.valid,
    whenBothSet: spec.whenBothSet ?? 'refuse',
  };
}

export type OptionSet = Readonly<Record<string, Option<unknown> | SecretOption>>;

/** Where a secret's value is, now: see `file-secret.ts`. */
export interface Secret {
  /** The current value; a file is re-read when it changed since the last call. */
  value(): string;
  /** The flag or variable it came from, for messages (never the value). */
  readonly source: string;
}

/** What parsing an {@link OptionSet} gives: each option's value under its key. */
export type OptionValues<O extends OptionSet> = {
  -readonly [K in keyof O]: NonNullable<O[K]> extends Option<infer T> ? T : Secret;
};

/**
 * How a message names an option: as the user set it (`setBy`: the flag, or the variable), else by both
 * of its names, for a value that is missing or whose default does not do.
 */
export function nameAsSet(declared: Option<unknown> | SecretOption, setBy: string | undefined): string {
  if (setBy !== undefined) return setBy;
  return declared.type === 'option'
    ? `${declared.flag} / ${declared.variable}`
    : `${declared.variable} / ${declared.fileVariable}`;
}

/** The flags and variables of a set, in declaration order; what `--help` lists. */
export function namesOf(options: OptionSet): { flags: string[]; variables: string[] } {
  const flags: string[] = [];
  const variables: string[] = [];
  for (const declared of Object.values(options)) {
    if (declared.type === 'option') {
      flags.push(declared.flag);
      variables.push(declared.variable);
    } else {
      flags.push(declared.fileFlag);
      variables.push(declared.fileVariable, declared.variable);
    }
  }
  return { flags, variables };
}
