/**
 * A Dockerfile reader: instructions with their line numbers, flags and JSON or shell form, grouped into
 * stages. It knows the syntax (comments, parser directives, `\` line continuations) and the instruction
 * names; what an instruction's arguments mean is for its executor (dockerfile-words.ts splits them).
 */

/** A Dockerfile that cannot be read or executed here, with the line it stumbled on. */
export class DockerfileError extends Error {
  override readonly name = 'DockerfileError';
  readonly line: number;
  constructor(line: number, message: string, options?: ErrorOptions) {
    super(`Dockerfile line ${line}: ${message}`, options);
    this.line = line;
  }
}

export interface Flag {
  name: string;
  /** `undefined` for a bare `--flag`. */
  value: string | undefined;
}

export interface Instruction {
  /** Upper case: `COPY`. */
  keyword: string;
  /** Leading `--name=value` options of FROM, RUN, COPY, ADD and HEALTHCHECK, in order (RUN repeats --mount). */
  flags: Flag[];
  /** The arguments after the flags, continuation lines joined, unexpanded. */
  arguments: string;
  /** The exec (JSON array) form's strings, when the arguments are one. */
  json: string[] | undefined;
  /** Where the instruction starts, 1-based. */
  line: number;
  /** The instruction as written (continuations joined), for messages and image history. */
  source: string;
}

export interface Stage {
  /** The `AS` name, lower case as Docker compares it. */
  name: string | undefined;
  from: Instruction;
  /** The image reference after FROM's flags, unexpanded. */
  baseImage: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARGs before the first FROM: only FROM lines and stages that redeclare them see them. */
  globalArgs: Instruction[];
  stages: Stage[];
}

const keywords = new Set([
  'ADD',
  'ARG',
  'CMD',
  'COPY',
  'ENTRYPOINT',
  'ENV',
  'EXPOSE',
  'FROM',
  'HEALTHCHECK',
  'LABEL',
  'MAINTAINER',
  'ONBUILD',
  'RUN',
  'SHELL',
  'STOPSIGNAL',
  'USER',
  'VOLUME',
  'WORKDIR',
]);
const keywordsWithFlags = new Set(['ADD', 'COPY', 'FROM', 'HEALTHCHECK', 'RUN']);
const jsonFormKeywords = new Set(['ADD', 'CMD', 'COPY', 'ENTRYPOINT', 'RUN', 'SHELL', 'VOLUME']);

interface LogicalLine {
  text: string;
  line: number;
}

function isComment(text: string): boolean {
  return /^\s*#/.test(text);
}

/** Parser directives (`# syntax=`, `# escape=`) come first; only the default escape is supported. */
function checkDirectives(lines: readonly string[]): void {
  for (const [index, text] of lines.entries()) {
    const directive = /^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$/.exec(text);
    if (!directive) return;
    if (directive[1]?.toLowerCase() === 'escape' && directive[2] !== '\\') {
      throw new DockerfileError(index + 1, `escape character ${directive[2] ?? ''} is not supported`);
    }
  }
}

/** Joins `\`-continued lines, dropping comment and empty lines inside a continuation as Docker does. */
function logicalLines(text: string): LogicalLine[] {
  const lines = text.split(/\r?\n/);
  checkDirectives(lines);
  const result: LogicalLine[] = [];
  let pending: LogicalLine | undefined;
  for (const [index, raw] of lines.entries()) {
    if (isComment(raw) || (pending && raw.trim() === '')) continue;
    const continued = /\\\s*$/.test(raw);
    const part = continued ? raw.replace(/\\\s*$/, '') : raw;
    pending = pending ? { text: pending.text + part, line: pending.line } : { text: part, line: index + 1 };
    if (!continued) {
      if (pending.text.trim() !== '') result.push(pending);
      pending = undefined;
    }
  }
  if (pending && pending.text.trim() !== '') result.push(pending);
  return result;
}

function splitFlags(text: string): { flags: Flag[]; rest: string } {
  const flags: Flag[] = [];
  let rest = text;
  for (;;) {
    const match = /^--([a-zA-Z][a-zA-Z0-9-]*)(?:=(\S*))?(?:\s+|$)/.exec(rest);
    if (!match) return { flags, rest };
    flags.push({ name: match[1] ?? '', value: match[2] });
    rest = rest.slice(match[0].length);
  }
}

function jsonForm(text: string): string[] | undefined {
  if (!text.startsWith('[')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  } catch {
    // Not JSON: Docker then reads the arguments as the shell form.
  }
  return undefined;
}

function instruction({ text, line }: LogicalLine): Instruction {
  const match = /^\s*(\S+)\s*(.*?)\s*$/s.exec(text);
  const keyword = (match?.[1] ?? '').toUpperCase();
  if (!keywords.has(keyword)) throw new DockerfileError(line, `unknown instruction ${match?.[1] ?? ''}`);
  const { flags, rest } = keywordsWithFlags.has(keyword)
    ? splitFlags(match?.[2] ?? '')
    : { flags: [], rest: match?.[2] ?? '' };
  const json = jsonFormKeywords.has(keyword) ? jsonForm(rest) : undefined;
  return { keyword, flags, arguments: rest, json, line, source: text.trim() };
}

function stageOf(from: Instruction): Stage {
  const match = /^(\S+)(?:\s+[aA][sS]\s+(\S+))?$/.exec(from.arguments);
  if (!match?.[1]) throw new DockerfileError(from.line, `FROM needs an image and at most "AS <name>"`);
  return { name: match[2]?.toLowerCase(), from, baseImage: match[1], instructions: [] };
}

/** Reads a Dockerfile's text. Throws {@link DockerfileError} on an unknown instruction or a malformed FROM. */
export function parseDockerfile(text: string): Dockerfile {
  const dockerfile: Dockerfile = { globalArgs: [], stages: [] };
  for (const line of logicalLines(text)) {
    const parsed = instruction(line);
    const current = dockerfile.stages.at(-1);
    if (parsed.keyword === 'FROM') dockerfile.stages.push(stageOf(parsed));
    else if (current) current.instructions.push(parsed);
    else if (parsed.keyword === 'ARG') dockerfile.globalArgs.push(parsed);
    else throw new DockerfileError(parsed.line, `${parsed.keyword} before the first FROM`);
  }
  if (dockerfile.stages.length === 0) throw new DockerfileError(1, 'no FROM instruction');
  return dockerfile;
}
