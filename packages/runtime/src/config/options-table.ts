/**
 * A program's options as the Markdown table of its README, generated from the declarations so that it
 * cannot drift from the parser; `scripts/readme-options.ts` writes it between markers.
 */
import { standardOptionsOf, type ProgramShape } from './program.ts';

/**
 * The README's options table: a Markdown table of the program's own options, then the standard ones,
 * padded as Prettier pads tables so that formatting leaves it unchanged.
 */
export function optionsTable(program: ProgramShape): string {
  const rows = [program.options, standardOptionsOf(program)].flatMap((options) =>
    Object.values(options).map((declared): string[] =>
      declared.type === 'option'
        ? [
            code(declared.flag),
            code(declared.variable),
            declared.required
              ? 'required'
              : declared.default !== undefined
                ? code(declared.default)
                : (declared.unset ?? ''),
            `${capitalise(declared.description)}; ${declared.kind.expected}.`,
          ]
        : [
            code(declared.fileFlag),
            `${code(declared.fileVariable)} or ${code(declared.variable)}`,
            'required (one)',
            `${capitalise(declared.description)}: the file (re-read when it changes), or the value itself (environment only).`,
          ],
    ),
  );
  return table(['Flag', 'Variable', 'Default', 'Meaning'], rows);
}

function code(text: string): string {
  return `\`${text}\``;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function table(header: string[], rows: string[][]): string {
  const cells = [header, ...rows].map((row) => row.map((cell) => cell.replaceAll('|', '\\|')));
  const widths = header.map((_, column) => Math.max(3, ...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]): string =>
    `| ${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  const [head = [], ...body] = cells;
  return [line(head), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n');
}
