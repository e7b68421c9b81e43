/**
 * The label selector language of the Hetzner Cloud API (`label_selector` query parameter), which follows
 * Kubernetes' set-based selectors: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`;
 * a comma between requirements means AND.
 */

type Requirement =
  | { readonly key: string; readonly op: 'exists' | 'not_exists' }
  | { readonly key: string; readonly op: 'in' | 'not_in'; readonly values: readonly string[] };

/** A selector the fake rejects with 400 `invalid_input`, like the real API. */
export class LabelSelectorError extends Error {
  override readonly name = 'LabelSelectorError';
}

const keyPattern = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const valuePattern = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** Splits on commas that are not inside `( )`, so `k in (a,b),x` is two requirements. */
function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const char = selector[i];
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((part) => part.trim());
}

function key(text: string, term: string): string {
  const trimmed = text.trim();
  if (!keyPattern.test(trimmed)) throw new LabelSelectorError(`invalid label key in '${term}'`);
  return trimmed;
}

function value(text: string, term: string): string {
  const trimmed = text.trim();
  if (!valuePattern.test(trimmed)) throw new LabelSelectorError(`invalid label value in '${term}'`);
  return trimmed;
}

function parseRequirement(term: string): Requirement {
  if (term === '') throw new LabelSelectorError('empty requirement in label selector');
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(term);
  if (set) {
    const values = (set[3] ?? '').split(',').map((v) => value(v, term));
    return { key: key(set[1] ?? '', term), op: set[2] === 'in' ? 'in' : 'not_in', values };
  }
  if (term.startsWith('!')) return { key: key(term.slice(1), term), op: 'not_exists' };
  const notEqual = term.indexOf('!=');
  if (notEqual >= 0) {
    return {
      key: key(term.slice(0, notEqual), term),
      op: 'not_in',
      values: [value(term.slice(notEqual + 2), term)],
    };
  }
  const equal = term.indexOf('=');
  if (equal >= 0) {
    const rest = term.slice(equal + 1);
    return {
      key: key(term.slice(0, equal), term),
      op: 'in',
      values: [value(rest.startsWith('=') ? rest.slice(1) : rest, term)],
    };
  }
  return { key: key(term, term), op: 'exists' };
}

/**
 * Compiles a selector into a predicate over a label map.
 * @throws LabelSelectorError for a malformed selector.
 */
export function compileLabelSelector(
  selector: string,
): (labels: Readonly<Record<string, string>>) => boolean {
  if (selector.trim() === '') return () => true;
  const requirements = splitTopLevel(selector).map(parseRequirement);
  return (labels) =>
    requirements.every((requirement) => {
      const present = Object.hasOwn(labels, requirement.key);
      switch (requirement.op) {
        case 'exists':
          return present;
        case 'not_exists':
          return !present;
        case 'in':
          return present && requirement.values.includes(labels[requirement.key] ?? '');
        case 'not_in':
          // Kubernetes semantics: `k!=v` also matches objects without the label.
          return !present || !requirement.values.includes(labels[requirement.key] ?? '');
      }
    });
}
