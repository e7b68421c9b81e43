import https from 'node:https';

/** The TLS credentials of a request, as the KubeConfig applied them. */
interface TlsMaterial {
  ca: https.RequestOptions['ca'];
  cert: https.RequestOptions['cert'];
  key: https.RequestOptions['key'];
}

const CREDENTIAL_OPTIONS = ['ca', 'cert', 'key'] as const;

/** Distinct credentials one agent tells apart; a process rotates its credentials a few times a day at most. */
const MAX_TLS_MATERIALS = 16;

/**
 * An HTTPS agent whose connection pools are named by a short key. Node names a pool by concatenating the
 * request's CA, client certificate and key PEMs (several KiB) when a request is added, when its socket is
 * freed and when it is removed: a measurable share of the CPU of every request. Here the name is Node's
 * own, from every option Node names a pool by, except that the credentials are compared by content with
 * those earlier requests carried and named by a number: requests with the same credentials and TLS
 * settings share connections, a rotated certificate gets connections of its own.
 */
export class KubeHttpsAgent extends https.Agent {
  readonly #materials: { material: TlsMaterial; id: number }[] = [];
  #nextId = 0;

  override getName(options: https.RequestOptions = {}): string {
    const { ca, cert, key } = options;
    return `${this.#nameWithoutCredentials(options)}:${this.#materialId({ ca, cert, key })}`;
  }

  /**
   * Node's name for `options` as if they carried no CA, certificate or key. Node calls getName with
   * the null-prototype copies it merges its options into, and copying one of those without three
   * properties costs several microseconds, a few times per request; so the three are set undefined on
   * the object itself for the synchronous call, and put back. An object that refuses the write (frozen)
   * is copied instead.
   */
  #nameWithoutCredentials(options: https.RequestOptions): string {
    const hidden = CREDENTIAL_OPTIONS.filter((name) => options[name] !== undefined);
    if (Object.isFrozen(options)) {
      return super.getName({ ...options, ca: undefined, cert: undefined, key: undefined });
    }
    const saved = hidden.map((name) => options[name]);
    try {
      for (const name of hidden) options[name] = undefined;
      return super.getName(options);
    } finally {
      hidden.forEach((name, i) => {
        options[name] = saved[i] as never;
      });
    }
  }

  #materialId(material: TlsMaterial): number {
    const known = this.#materials.find((entry) => sameMaterial(entry.material, material));
    if (known !== undefined) return known.id;
    if (this.#materials.length >= MAX_TLS_MATERIALS) this.#materials.shift();
    const id = this.#nextId++;
    this.#materials.push({ material, id });
    return id;
  }
}

function sameMaterial(a: TlsMaterial, b: TlsMaterial): boolean {
  return sameValue(a.ca, b.ca) && sameValue(a.cert, b.cert) && sameValue(a.key, b.key);
}

/**
 * Equal PEM contents: strings and Buffers, or arrays of them, as the KubeConfig applies them (new
 * Buffers with every application, see AppliedKubeConfig). Anything else Node's TLS options take (a
 * KeyObject, a key with its passphrase) is the same only when it is the same object.
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  const pem = (value: unknown): Buffer | undefined =>
    typeof value === 'string' ? Buffer.from(value) : Buffer.isBuffer(value) ? value : undefined;
  const [left, right] = [pem(a), pem(b)];
  return left !== undefined && right !== undefined && left.equals(right);
}
