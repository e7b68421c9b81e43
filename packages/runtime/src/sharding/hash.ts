/**
 * The hash kube-apiserver shards by (k8s.io/apimachinery pkg/sharding `HashField`): Go's `hash/fnv`
 * New64a over the bytes of the field's value, formatted `%016x`. A replica computes the same value to
 * know which bucket an object falls in, so it must agree with the server bit for bit.
 */

const OFFSET_BASIS = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;

const utf8 = new TextEncoder();

/**
 * FNV-1a 64 over the UTF-8 bytes of `text`, as an unsigned 64-bit bigint. Go hashes the bytes of its
 * string; a JavaScript string holds UTF-16, so it is encoded first. A lone surrogate becomes U+FFFD
 * here, as Go's encoding/json already made it when the server decoded the object.
 */
export function fnv1a64(text: string): bigint {
  let hash = OFFSET_BASIS;
  for (const byte of utf8.encode(text)) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * PRIME);
  return hash;
}

/** {@link fnv1a64} as 16 lowercase hex digits without `0x`, exactly as apimachinery's `HashField`. */
export function hashHex(text: string): string {
  return fnv1a64(text).toString(16).padStart(16, '0');
}
