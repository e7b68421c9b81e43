/**
 * Names derived from an At's name that stay valid for any At name length. At names are DNS-1123
 * subdomains of up to 253 characters (the API server checks); pod names have the same limit, and label
 * values at most 63 characters.
 */
import { createHash } from 'node:crypto';

const POD_NAME_MAX = 253;
const LABEL_VALUE_MAX = 63;
const HASH_LENGTH = 10;

function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, HASH_LENGTH);
}

/**
 * `<at>-pod` as in the book, when it fits; otherwise the name truncated, plus a hash of the full name
 * (so two long names with a common prefix get different pods), plus `-pod`. Deterministic: the name is
 * the idempotency key that keeps a retried create from making a second pod.
 */
export function podNameFor(atName: string): string {
  const simple = `${atName}-pod`;
  if (simple.length <= POD_NAME_MAX) return simple;
  const suffix = `-${shortHash(atName)}-pod`;
  // A subdomain segment must end alphanumeric; the cut may land right after a '-' or '.'.
  return `${atName.slice(0, POD_NAME_MAX - suffix.length).replace(/[-.]+$/, '')}${suffix}`;
}

/** The At name as a label value: itself when it fits in 63 characters, else truncated plus a hash. */
export function atNameLabelValue(atName: string): string {
  if (atName.length <= LABEL_VALUE_MAX) return atName;
  const suffix = `-${shortHash(atName)}`;
  return `${atName.slice(0, LABEL_VALUE_MAX - suffix.length).replace(/[-._]+$/, '')}${suffix}`;
}
