/**
 * One more project reference in the root tsconfig.json, written as the others are: the repository has
 * one `{ "path": ... }` per line, so a new controller's diff of the file is one line. Pure.
 */
import { parseJson } from '@nx/devkit';

/** A whole line holding one reference object, its indentation and any comma after it captured. */
const REFERENCE_LINE = /^([ \t]*)\{[ \t]*"path":[ \t]*"(?:[^"\\]|\\.)*"[ \t]*\}(,?)[ \t]*$/gm;

/**
 * `text` with a reference to `path` on a new line after the last reference, in that line's layout; or
 * undefined when the references are not one per line, the last closing the array (the caller then
 * rewrites the file as JSON).
 */
export function withReference(text: string, path: string): string | undefined {
  const last = [...text.matchAll(REFERENCE_LINE)].at(-1);
  if (last === undefined || last[2] === ',') return undefined;
  const end = last.index + last[0].trimEnd().length;
  if (!/^\s*\]/.test(text.slice(end))) return undefined;
  const added = last[0]
    .trimEnd()
    .replace(
      /"path":([ \t]*)"(?:[^"\\]|\\.)*"/,
      (_, space: string) => `"path":${space}${JSON.stringify(path)}`,
    );
  const edited = `${text.slice(0, end)},\n${added}${text.slice(end)}`;
  // Only an edit that adds exactly that reference and changes nothing else.
  const before = parseJson<{ references?: unknown[] }>(text);
  const after = parseJson<{ references?: unknown[] }>(edited);
  const expected = { ...before, references: [...(before.references ?? []), { path }] };
  return JSON.stringify(after) === JSON.stringify(expected) ? edited : undefined;
}
