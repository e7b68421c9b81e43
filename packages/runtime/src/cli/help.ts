import type { PackageInfo } from './package-info.ts';
import type { Program } from './program.ts';

/** The `--help` text: what the program is, its flags, every variable it reads and its exit statuses. */
export function formatHelp(program: Program, info: PackageInfo): string {
  const flagRows: [string, string][] = [
    ...(program.flags ?? []).map((flag): [string, string] => [
      `${flag.name} <value>`,
      `overrides ${flag.variable}`,
    ]),
    ['-h, --help', 'print this help and exit'],
    ['--version', `print "${info.name} <version>" and exit`],
  ];
  const variableRows = program.variables.map((variable): [string, string] => [
    variable.name,
    variable.default === undefined
      ? variable.description
      : `${variable.description} (default: ${variable.default})`,
  ]);
  const width = Math.max(...[...flagRows, ...variableRows].map(([left]) => left.length));
  const table = (rows: [string, string][]): string[] =>
    rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
  return [
    info.description ? `${info.name} ${info.version}: ${info.description}` : `${info.name} ${info.version}`,
    '',
    `Usage: ${info.name} [flags]`,
    '',
    program.flags?.length
      ? 'Configured by the environment variables below; a flag overrides the variable it names.'
      : 'Configured by the environment variables below.',
    'Exit status: 0 after SIGTERM or SIGINT; 1 on invalid configuration, a failed start or lost',
    'leadership; 2 on a bad argument.',
    '',
    'Flags:',
    ...table(flagRows),
    '',
    'Environment:',
    ...table(variableRows),
    '',
  ].join('\n');
}
