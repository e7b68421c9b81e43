/**
 * A Kubernetes label selector as an option's value, checked by the rules the API server applies
 * (apimachinery's `labels.Parse`), so a typo exits at start naming the option instead of every list
 * and watch failing with 400 while the process waits, unready, forever.
 */
import { dnsSubdomain, labelValue, type ValueKind } from './kinds.ts';

/** A label key's optional prefix. */
const prefixKind = dnsSubdomain();
/** A label key's name part: alphanumerics at both ends, `-`, `_`, `.` inside. */
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const INTEGER = /^[0-9]+$/;

/** `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (v,...)`, `key notin (v,...)`, `key>n`, `key<n`. */
const TERM =
  /^\s*(?:!\s*(?<absent>[^\s=!<>(),]+)|(?<key>[^\s=!<>(),]+)\s*(?:(?<op>==|=|!=|<|>)\s*(?<value>[^\s=!<>(),]*)|\s(?<setOp>in|notin)\s*\((?<values>[^()]*)\))?)\s*$/;

/** A qualified name, as label keys are: an optional DNS subdomain and `/`, then a name of at most 63. */
function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (prefix !== undefined && prefixKind.parse(prefix) === undefined) return false;
  return name.length <= 63 && NAME.test(name);
}

function isLabelValue(value: string): boolean {
  return value === '' || labelValue.parse(value) !== undefined;
}

function isTerm(term: string): boolean {
  const groups = TERM.exec(term)?.groups;
  if (groups === undefined) return false;
  if (groups.absent !== undefined) return isLabelKey(groups.absent);
  const { key = '', op, value = '', setOp, values } = groups;
  if (!isLabelKey(key)) return false;
  if (op === '<' || op === '>') return INTEGER.test(value);
  if (op !== undefined) return isLabelValue(value);
  if (setOp !== undefined) {
    // `in ()` is the set of the empty value, as the API server reads it.
    return (values ?? '').split(',').every((item) => isLabelValue(item.trim()));
  }
  return true;
}

/** Terms, separated by commas outside a set's parentheses. */
function termsOf(selector: string): string[] {
  return selector.split(/,(?![^(]*\))/);
}

/** e.g. `node-role.kubernetes.io/worker`, `pool in (a,b),!legacy`; the text is kept as given. */
export const labelSelector: ValueKind<string> = {
  placeholder: '<selector>',
  expected: 'a label selector such as "node-role.kubernetes.io/worker" or "pool in (a,b),!legacy"',
  parse: (raw) => (termsOf(raw).every(isTerm) ? raw : undefined),
};
