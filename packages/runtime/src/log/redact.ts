/**
 * Keeping secrets out of everything the controllers write for people to read: log lines, Event notes,
 * condition messages. Third-party error text (a SaaS API echoing the request's Authorization header)
 * flows into all three, so all three use {@link SecretRegistry.redactText}.
 *
 * Rules for text ({@link SecretRegistry.redactText}):
 * 1. any registered secret value ({@link SecretRegistry.register}) is replaced by `[REDACTED]` wherever it
 *    appears inside a string (an API token echoed in an error message, a password in a URL);
 * 2. credentials recognisable by their shape, registered or not: the credential of an HTTP `Basic` or
 *    `Bearer` scheme (`Authorization: Basic [REDACTED]`: the scheme stays, it tells a reader what was
 *    there) and JSON Web Tokens (`eyJ...`.`...`.`...`, e.g. a service-account token).
 *
 * Log entries additionally get rule 3, applied to the message and to every metadata value, however
 * deeply nested:
 * 3. the whole value of a key whose name says it holds a credential is replaced by `[REDACTED]`:
 *    names ending in `token`, `password`, `passwd`, `secret`, `apikey`, `credential(s)`, or named
 *    `authorization`/`cookie`/`set-cookie`, compared case-insensitively and ignoring `-`/`_`
 *    (`accessToken`, `api_key`, `clientSecret`, `Authorization`). Names that merely start with such a
 *    word (`tokenFile`, `secretName`) are references, not credentials, and stay.
 *
 * Error objects in metadata are turned into plain `{ name, message, stack, cause, ...own fields }`
 * first (winston's JSON format would print `{}` for them), so their texts are redacted too.
 */
export const REDACTED = '[REDACTED]';

/**
 * Values shorter than this are not registered: redacting every occurrence of a 1-3 character string
 * would shred log lines, and such a value is no secret anyway.
 */
export const MIN_SECRET_LENGTH = 4;

const credentialKey =
  /(token|password|passwd|secret|apikey|credentials?)$|^(authorization|proxyauthorization|cookie|setcookie)$/;

/** true when a metadata key names a credential (see the module comment). */
export function isCredentialKey(key: string): boolean {
  return credentialKey.test(key.toLowerCase().replace(/[-_]/g, ''));
}

/** The set of secret values to redact. Loggers share {@link globalSecrets} unless given their own. */
export class SecretRegistry {
  readonly #values = new Set<string>();
  #pattern: RegExp | undefined;

  /** Redact `value` from now on (no-op for values shorter than {@link MIN_SECRET_LENGTH}). */
  register(value: string): void {
    if (value.length < MIN_SECRET_LENGTH || this.#values.has(value)) return;
    this.#values.add(value);
    // Longest first, so a secret that contains another is replaced whole.
    const alternatives = [...this.#values]
      .sort((a, b) => b.length - a.length)
      .map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    this.#pattern = new RegExp(alternatives.join('|'), 'g');
  }

  /** `text` with every registered value and every credential-shaped string replaced (see the module comment). */
  redactText(text: string): string {
    return redactCredentialShapes(this.#redactRegistered(text));
  }

  #redactRegistered(text: string): string {
    if (!this.#pattern) return text;
    this.#pattern.lastIndex = 0;
    return text.replace(this.#pattern, REDACTED);
  }
}

/** The characters of an RFC 7235 `token68`, the form of Basic and Bearer credentials. */
const TOKEN68 = '[A-Za-z0-9._~+/-]+=*';

/**
 * `Basic <credential>` / `Bearer <credential>`. Schemes are case-insensitive (RFC 7235), spelled out
 * rather than with the `i` flag, which would also loosen the plain-word check: that negative lookahead
 * spares a capitalised or lowercase word (`Basic authentication failed`), since prose is not a
 * credential and shredding it would hide what went wrong.
 */
const authSchemeCredential = new RegExp(
  `\\b(Basic|basic|BASIC|Bearer|bearer|BEARER)(\\s+)(?![A-Za-z][a-z]*(?![A-Za-z0-9._~+/=-]))${TOKEN68}`,
  'g',
);

/** A JWT: base64url header (always `{"` = `eyJ`), payload and a signature that is empty for `alg: none`. */
const jsonWebToken = /\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

function redactCredentialShapes(text: string): string {
  return text.replace(authSchemeCredential, `$1$2${REDACTED}`).replace(jsonWebToken, REDACTED);
}

/** The process-wide registry: register a secret once (e.g. where config is parsed), every logger redacts it. */
export const globalSecrets = new SecretRegistry();

/** Registers `value` in {@link globalSecrets}. */
export function registerSecret(value: string): void {
  globalSecrets.register(value);
}

/**
 * `text` redacted as log lines are ({@link SecretRegistry.redactText} of {@link globalSecrets}): for
 * text that leaves the process other than through the logger, such as status condition messages.
 */
export function redactText(text: string): string {
  return globalSecrets.redactText(text);
}

/**
 * A redacted deep copy of `value` (strings, arrays, plain objects, Errors; other values as they are).
 * Cycles become `[Circular]`; nesting deeper than 10 levels becomes `[Truncated]`.
 */
export function redactValue(
  value: unknown,
  secrets: SecretRegistry,
  seen = new WeakSet<object>(),
  depth = 0,
): unknown {
  if (typeof value === 'string') return secrets.redactText(value);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[Circular]';
  if (depth > 10) return '[Truncated]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets, seen, depth + 1));
    if (value instanceof Error) return redactRecord(errorToRecord(value), secrets, seen, depth);
    if (value instanceof Date) return value;
    if (Buffer.isBuffer(value)) return `[Buffer ${value.length} bytes]`;
    return redactRecord(value as Record<string, unknown>, secrets, seen, depth);
  } finally {
    seen.delete(value);
  }
}

function redactRecord(
  record: Record<string, unknown>,
  secrets: SecretRegistry,
  seen: WeakSet<object>,
  depth: number,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(record)) {
    out[key] =
      isCredentialKey(key) && item !== undefined && item !== null && item !== ''
        ? REDACTED
        : redactValue(item, secrets, seen, depth + 1);
  }
  return out;
}

function errorToRecord(error: Error): Record<string, unknown> {
  const record: Record<string, unknown> = { name: error.name, message: error.message };
  // `level` appears when winston was handed the Error itself as the entry; it is not the error's.
  for (const [key, item] of Object.entries(error)) if (key !== 'level') record[key] = item;
  if (error.stack !== undefined) record.stack = error.stack;
  if (error.cause !== undefined) record.cause = error.cause;
  return record;
}
