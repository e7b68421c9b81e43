/**
 * The `--help` text, generated from a program's declarations so that it cannot drift from the parser
 * (`options-table.ts` does the same for the READMEs).
 */
import type { Option, OptionSet, SecretOption } from './option.ts';
import { standardOptionsOf, type ProgramShape } from './program.ts';

/** What `--help` says about a package besides its options. */
export interface HelpInfo {
  readonly name: string;
  readonly version: string;
  readonly description: string;
}

/** Read from the environment by the in-cluster configuration (`loadKubeConfig`), and by no option. */
export const IN_CLUSTER_VARIABLES = ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'] as const;

const NAMING_RULE =
  'Each flag has an environment variable twin, its name in upper case with dashes as underscores ' +
  '(--leader-election-id is LEADER_ELECTION_ID); a flag wins over its variable, and an empty value is ' +
  'unset. Durations are Go durations: 500ms, 30s, 1m30s. A DNS-1123 label has lower-case letters, digits ' +
  'and "-"; a subdomain also dots.';

export function formatHelp(program: ProgramShape, info: HelpInfo): string {
  const section = (options: OptionSet): string[] =>
    Object.values(options).flatMap((declared) => {
      const { heading, text } =
        declared.type === 'option' ? describeOption(declared) : describeSecret(declared);
      return [`  ${heading}`, ...wrap(text, 92).map((line) => `        ${line}`)];
    });
  return [
    info.description ? `${info.name} ${info.version}: ${info.description}` : `${info.name} ${info.version}`,
    '',
    `Usage: ${info.name} [flags]`,
    '',
    ...wrap(NAMING_RULE, 100),
    'Exit status: 0 after SIGTERM or SIGINT; 1 when start-up fails or leadership is lost; 2 for a bad',
    'argument or value, also one naming what does not exist (a kubeconfig file or context, say).',
    '',
    `Flags of ${info.name}:`,
    ...section(program.options),
    '',
    'Standard flags:',
    ...section(standardOptionsOf(program)),
    '  -h, --help',
    '        print this help and exit',
    '  --version',
    `        print "${info.name} <version>" and exit`,
    '',
    'Also read from the environment:',
    `  ${IN_CLUSTER_VARIABLES.join(', ')}`,
    '        set in a pod: with its service account, the cluster to use when no kubeconfig is given',
    '',
  ].join('\n');
}

function describeOption(declared: Option<unknown>): { heading: string; text: string } {
  const { flag, variable, kind } = declared;
  return {
    heading: `${flag}${kind.placeholder ? ` ${kind.placeholder}` : ''}  (${variable})`,
    text: `${declared.description}; ${kind.expected}${whenUnset(declared)}`,
  };
}

function describeSecret(declared: SecretOption): { heading: string; text: string } {
  return {
    heading: `${declared.fileFlag} <path>  (${declared.fileVariable})`,
    text:
      `file holding ${declared.description}, re-read when it changes; or the value itself in ` +
      `${declared.variable} (environment only); required`,
  };
}

function whenUnset(declared: Option<unknown>): string {
  if (declared.required) return '; required';
  if (declared.default !== undefined) return ` (default ${JSON.stringify(declared.default)})`;
  return declared.unset ? ` (unset: ${declared.unset})` : '';
}

/** Greedy word wrap; a word longer than `width` gets a line of its own. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
