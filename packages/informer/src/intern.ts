import type { KubeObject } from '@loopwright/client';

/** How many distinct strings an interner holds before it starts over. */
const DEFAULT_CAPACITY = 4096;

/**
 * Makes equal strings of different cached objects one string. V8's `JSON.parse` internalizes only
 * very short string values (under 10 characters), so every object of a list or watch event carries
 * its own copy of its namespace, of long label values and of its owner references, although
 * thousands of cached objects share them.
 *
 * Bounded: once `capacity` distinct strings are known, the table starts over. Strings already shared
 * stay shared; only values the table forgot get their next copies shared again. So high-cardinality
 * values (a `pod-template-hash`, owner UIDs) cost at most `capacity` table entries, never a leak.
 */
export class StringInterner {
  readonly #strings = new Map<string, string>();
  readonly #capacity: number;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.#capacity = capacity;
  }

  /** The first equal string seen, or `value` itself, which is then the one later equal strings become. */
  intern(value: string): string {
    const known = this.#strings.get(value);
    if (known !== undefined) return known;
    if (this.#strings.size >= this.#capacity) this.#strings.clear();
    this.#strings.set(value, value);
    return value;
  }

  /**
   * Interns, in place, the strings objects of one resource commonly have in common: `apiVersion`,
   * `kind`, `metadata.namespace`, `metadata.generateName`, label values, finalizers and the fields of
   * owner references. Values stay equal (`===`), so this changes nothing a reader can see. Unique
   * strings (names, UIDs, timestamps) and annotation values (large, rarely shared) are left alone:
   * they would only churn the table.
   */
  internObject<T extends KubeObject>(obj: T): T {
    if (obj.apiVersion !== undefined) obj.apiVersion = this.intern(obj.apiVersion);
    if (obj.kind !== undefined) obj.kind = this.intern(obj.kind);
    const metadata = obj.metadata;
    if (metadata === undefined) return obj;
    if (metadata.namespace !== undefined) metadata.namespace = this.intern(metadata.namespace);
    if (metadata.generateName !== undefined) metadata.generateName = this.intern(metadata.generateName);
    const labels = metadata.labels;
    if (labels !== undefined) {
      for (const [key, value] of Object.entries(labels)) labels[key] = this.intern(value);
    }
    const finalizers = metadata.finalizers;
    if (finalizers !== undefined) {
      for (const [i, finalizer] of finalizers.entries()) finalizers[i] = this.intern(finalizer);
    }
    for (const owner of metadata.ownerReferences ?? []) {
      owner.apiVersion = this.intern(owner.apiVersion);
      owner.kind = this.intern(owner.kind);
      owner.name = this.intern(owner.name);
      owner.uid = this.intern(owner.uid);
    }
    return obj;
  }
}
