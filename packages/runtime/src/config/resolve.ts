/**
 * Every option's value from its flag or, when the flag is not given, its environment variable; an
 * empty value counts as unset. Everything is validated up front: the first bad value throws a
 * {@link ConfigError}, one line naming the flag or variable the user set and what it expects.
 */
import { ConfigError } from './config-error.ts';
import { FileSecret, fixedSecret } from './file-secret.ts';
import {
  nameAsSet,
  type Option,
  type OptionSet,
  type OptionValues,
  type Secret,
  type SecretOption,
} from './option.ts';

export type Env = Readonly<Record<string, string | undefined>>;

/** Which flag or variable set each option; undefined where the option was left unset. */
export type SetBy<O extends OptionSet> = { readonly [K in keyof O]: string | undefined };

export interface Resolved<O extends OptionSet> {
  readonly values: OptionValues<O>;
  readonly setBy: SetBy<O>;
}

/**
 * `flags`: the values given on the command line by flag name, in order (see `parseCommandLine`);
 * a list option joins them, any other takes the last.
 */
export function resolveOptions<O extends OptionSet>(
  options: O,
  flags: ReadonlyMap<string, readonly string[]>,
  env: Env,
): Resolved<O> {
  const values: Record<string, unknown> = {};
  const setBy: Record<string, string | undefined> = {};
  for (const [key, declared] of Object.entries(options)) {
    const resolved =
      declared.type === 'option' ? resolveOption(declared, flags, env) : resolveSecret(declared, flags, env);
    values[key] = resolved.value;
    setBy[key] = resolved.setBy;
  }
  return { values: values as OptionValues<O>, setBy: setBy as SetBy<O> };
}

interface Raw {
  readonly text: string;
  readonly name: string;
}

function raw(
  flag: string,
  variable: string,
  flags: ReadonlyMap<string, readonly string[]>,
  env: Env,
  list = false,
): Raw | undefined {
  const fromEnv = env[variable];
  const given = flags.get(flag);
  const text = given === undefined ? fromEnv : list ? given.join(',') : given.at(-1);
  const trimmed = text?.trim();
  return trimmed ? { text: trimmed, name: given === undefined ? variable : flag } : undefined;
}

function resolveOption(
  declared: Option<unknown>,
  flags: ReadonlyMap<string, readonly string[]>,
  env: Env,
): { value: unknown; setBy: string | undefined } {
  const { flag, variable, kind } = declared;
  const given = raw(flag, variable, flags, env, kind.list);
  if (given === undefined) {
    if (declared.required)
      throw new ConfigError(
        nameAsSet(declared, undefined),
        `required: ${declared.description} (${kind.expected})`,
      );
    return { value: declared.valueWhenUnset, setBy: undefined };
  }
  const value = kind.parse(given.text);
  if (value === undefined)
    throw new ConfigError(given.name, `expected ${kind.expected}, got ${JSON.stringify(given.text)}`);
  return { value, setBy: given.name };
}

function resolveSecret(
  declared: SecretOption,
  flags: ReadonlyMap<string, readonly string[]>,
  env: Env,
): { value: Secret; setBy: string } {
  const { variable, fileFlag, fileVariable } = declared;
  const given = raw(fileFlag, fileVariable, flags, env);
  const direct = env[variable]?.trim() || undefined;
  const bothVariables = given?.name === fileVariable && direct !== undefined;
  if (bothVariables && declared.whenBothSet === 'refuse')
    throw new ConfigError(fileVariable, `set either ${variable} or ${fileVariable}, not both`);
  const file = bothVariables ? undefined : given;
  if (file !== undefined) {
    const secret = new FileSecret({
      path: file.text,
      source: file.name,
      expected: declared.expected,
      valid: declared.valid,
    });
    return { value: secret, setBy: file.name };
  }
  if (direct === undefined)
    throw new ConfigError(
      nameAsSet(declared, undefined),
      `required: ${declared.description}, or the path of a file holding it`,
    );
  // Never echo the value: it is a secret.
  if (!declared.valid(direct)) throw new ConfigError(variable, `expected ${declared.expected}`);
  return { value: fixedSecret(direct, variable), setBy: variable };
}
