import { createHash } from 'node:crypto';

/** Event names are DNS subdomains: the API server rejects longer ones. */
export const EVENT_NAME_MAX_LENGTH = 253;
/** Hex digits of the object name's hash in a shortened name: tells apart objects that share a prefix. */
const NAME_HASH_LENGTH = 8;

/**
 * client-go's Event name, `<regarding name>.<hex unix nanoseconds>`, when that fits in 253 characters.
 * Object names may themselves be up to 253 characters, and client-go's form then gets every Event of
 * the object rejected; so a longer name becomes `<cut name>-<8 hex of sha256(name)>.<hex nanos>`. The
 * hash keeps objects that share the cut prefix apart (their Events must not collide or mix in
 * `kubectl get events`), and trailing '.' and '-' are cut too because a DNS label must end in a letter
 * or digit.
 */
export function eventName(regardingName: string, nanos: bigint): string {
  const suffix = `.${nanos.toString(16)}`;
  if (regardingName.length + suffix.length <= EVENT_NAME_MAX_LENGTH) return `${regardingName}${suffix}`;
  const hash = nameHash(regardingName);
  const room = EVENT_NAME_MAX_LENGTH - suffix.length - hash.length - 1;
  const prefix = regardingName.slice(0, room).replace(/[.-]+$/, '');
  return `${prefix}-${hash}${suffix}`;
}

function nameHash(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, NAME_HASH_LENGTH);
}
