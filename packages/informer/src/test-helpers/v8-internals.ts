import { setFlagsFromString } from 'node:v8';
import { runInThisContext } from 'node:vm';

// V8's runtime functions answer what JavaScript cannot observe: whether an object is stored as a
// hash table. Code compiled after the flag is set may use the `%` syntax; the flag changes nothing
// else.
setFlagsFromString('--allow-natives-syntax');

/** False for a dictionary-mode object: V8 stores its properties in a hash table, costing more heap. */
export const hasFastProperties = runInThisContext('(o) => %HasFastProperties(o)') as (o: object) => boolean;
