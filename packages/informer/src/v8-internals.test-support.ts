import { setFlagsFromString } from 'node:v8';
import { runInNewContext, runInThisContext } from 'node:vm';

// V8's runtime functions answer what JavaScript cannot observe: whether two equal strings are one
// string, whether an object is stored as a hash table. Code compiled after the flag is set may use
// the `%` syntax; the flag changes nothing else.
setFlagsFromString('--allow-natives-syntax');

/** True when `a` and `b` are the same heap object: for strings, one copy instead of two equal ones. */
export const sameHeapObject = runInThisContext('(a, b) => %IsSameHeapObject(a, b)') as (
  a: unknown,
  b: unknown,
) => boolean;

/** False for a dictionary-mode object: V8 stores its properties in a hash table, costing more heap. */
export const hasFastProperties = runInThisContext('(o) => %HasFastProperties(o)') as (o: object) => boolean;

setFlagsFromString('--expose-gc');

/** A full garbage collection, as `--expose-gc`'s `gc()`, without the flag on the command line. */
export const collectGarbage = runInNewContext('gc') as () => void;
