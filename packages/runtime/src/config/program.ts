/**
 * A controller program's declaration: its own options (in its `config.ts`), plus what it tells the
 * standard ones. From it come the parser, `--help` and the README tables.
 */
import { parseCommandLine } from './command-line.ts';
import { namesOf, type OptionSet, type OptionValues } from './option.ts';
import { resolveOptions, type Env, type SetBy } from './resolve.ts';
import {
  applySharding,
  checkStandard,
  standardOptions,
  watchNamespaceOption,
  type StandardOptions,
  type StandardValues,
} from './standard-options.ts';

export interface ControllerProgram<O extends OptionSet> {
  /** The executable's name (its package's, unscoped): `--version`, log lines, the default Lease name. */
  readonly name: string;
  /**
   * Its package.json, for `--version` and `--help`, located from the module so that it works from `src/`
   * and `dist/` alike: `new URL('../package.json', import.meta.url)`.
   */
  readonly packageJson: URL;
  /** The controller's own options. */
  readonly options: O;
  /** Relations between its own options; throws a `ConfigError` naming the option to fix. */
  readonly check?: (values: OptionValues<O>, setBy: SetBy<O>) => void;
  /** The default of `--workers`. */
  readonly workers: number;
  /** The default of `--reconcile-timeout`: a Go duration, `0` for none. */
  readonly reconcileTimeout: string;
  /** Its resources are namespaced: it takes `--watch-namespace`. */
  readonly namespaced: boolean;
  /** Its controllers may run sharded: it takes `--sharding` and `--sharding-ring` (see StandardDefaults). */
  readonly sharding?: true;
}

/** What the option lists, `--help` and the README tables need of a program, whatever its options. */
export type ProgramShape = Pick<
  ControllerProgram<OptionSet>,
  'name' | 'options' | 'workers' | 'reconcileTimeout' | 'namespaced' | 'sharding'
>;

/** Declares a program; fails at once when a flag or variable is declared twice (or shadows a standard one). */
export function defineProgram<O extends OptionSet>(program: ControllerProgram<O>): ControllerProgram<O> {
  const seen = new Set<string>(['--help', '-h', '--version']);
  const names = allOptions(program).flatMap((options) => {
    const { flags, variables } = namesOf(options);
    return [...flags, ...variables];
  });
  for (const name of names) {
    if (seen.has(name)) throw new TypeError(`${program.name}: ${name} is declared twice`);
    seen.add(name);
  }
  return program;
}

/**
 * The standard options as this program has them (its Lease name and workers; a namespace scope or not;
 * sharding or not).
 */
export function standardOptionsOf(
  program: ProgramShape,
): StandardOptions & { watchNamespace?: typeof watchNamespaceOption } {
  const standard = standardOptions(program);
  return program.namespaced ? { ...standard, watchNamespace: watchNamespaceOption } : standard;
}

/** The program's own options and the standard ones: two sets, whose keys may repeat (flags may not). */
function allOptions(program: ProgramShape): OptionSet[] {
  return [program.options, standardOptionsOf(program)];
}

export interface Configuration<O extends OptionSet> {
  readonly config: OptionValues<O>;
  /** `watchNamespace` is undefined for all namespaces and for programs that are not namespaced. */
  readonly standard: StandardValues & { readonly watchNamespace: string[] | undefined };
  /**
   * Which flag or variable set each option (undefined: unset), to name a value that start-up finds
   * wrong as the user set it: `new ConfigError(nameAsSet(declared, setBy.config.key), problem)`.
   */
  readonly setBy: {
    readonly config: SetBy<O>;
    readonly standard: SetBy<ReturnType<typeof standardOptionsOf>>;
  };
}

export type ParsedProgram<O extends OptionSet> =
  | { readonly action: 'help' }
  | { readonly action: 'version' }
  | ({ readonly action: 'run' } & Configuration<O>);

/**
 * The command line and the environment, validated.
 * @throws ConfigError for the first bad argument or value.
 */
export function parseProgram<O extends OptionSet>(
  program: ControllerProgram<O>,
  argv: readonly string[],
  env: Env,
): ParsedProgram<O> {
  const commandLine = parseCommandLine(argv, allOptions(program));
  if (commandLine.action !== 'run') return commandLine;
  const own = resolveOptions(program.options, commandLine.flags, env);
  const standardSet = standardOptionsOf(program);
  const standard = resolveOptions(standardSet, commandLine.flags, env);
  program.check?.(own.values, own.setBy);
  checkStandard(standardSet, standard.values, standard.setBy);
  const values = applySharding(standard.values);
  return {
    action: 'run',
    config: own.values,
    standard: { ...values, watchNamespace: values.watchNamespace },
    setBy: { config: own.setBy, standard: standard.setBy },
  };
}
