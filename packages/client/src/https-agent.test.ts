import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeHttpsAgent } from './https-agent.ts';

describe('KubeHttpsAgent connection pools', () => {
  const pem = (text: string): Buffer => Buffer.from(`-----BEGIN CERTIFICATE-----\n${text}\n`);
  const options = (ca: string, cert: string, extra: Record<string, unknown> = {}) => ({
    host: 'api.example',
    port: 6443,
    ca: pem(ca),
    cert: pem(cert),
    key: pem('key'),
    ...extra,
  });

  it('names one pool for equal credentials, though each request carries new Buffers, without their PEMs', () => {
    const agent = new KubeHttpsAgent();
    const name = agent.getName(options('ca', 'cert'));
    assert.equal(agent.getName(options('ca', 'cert')), name);
    assert.equal(agent.getName({ ...options('ca', 'cert'), ca: pem('ca').toString() }), name);
    assert.ok(name.length < 100, `a short name, got ${name.length} characters`);
    agent.destroy();
  });

  it('leaves the options it names as they were, and names frozen or null-prototype ones alike', () => {
    const agent = new KubeHttpsAgent();
    const name = agent.getName(options('ca', 'cert'));
    // As Node's addRequest passes them: a null-prototype copy, here without a key.
    const given: Record<string, unknown> = { __proto__: null, ...options('ca', 'cert'), key: undefined };
    delete given.key;
    const ca = given.ca;
    const withoutKey = agent.getName(given);
    assert.notEqual(withoutKey, name);
    assert.deepEqual(Object.keys(given), ['host', 'port', 'ca', 'cert']);
    assert.equal(given.ca, ca);
    assert.equal(agent.getName(Object.freeze(options('ca', 'cert'))), name);
    assert.equal(agent.getName(Object.freeze({ ...given })), withoutKey);
    agent.destroy();
  });

  it('gives other credentials, servers or TLS settings a pool of their own', () => {
    const agent = new KubeHttpsAgent();
    const names = [
      agent.getName(options('ca', 'cert')),
      agent.getName(options('ca', 'rotated cert')),
      agent.getName(options('other ca', 'cert')),
      agent.getName({ ...options('ca', 'cert'), key: pem('other key') }),
      agent.getName({ ...options('ca', 'cert'), key: undefined }),
      agent.getName(options('ca', 'cert', { port: 443 })),
      agent.getName(options('ca', 'cert', { host: 'other.example' })),
      agent.getName(options('ca', 'cert', { servername: 'kubernetes' })),
      agent.getName(options('ca', 'cert', { rejectUnauthorized: false })),
      agent.getName({ ...options('ca', 'cert'), ca: [pem('ca'), pem('second ca')] }),
      // The rest of what Node names a pool by, which a KubeConfig does not set but a caller may.
      agent.getName(options('ca', 'cert', { localAddress: '127.0.0.2' })),
      agent.getName(options('ca', 'cert', { family: 6 })),
      agent.getName(options('ca', 'cert', { ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' })),
      agent.getName(options('ca', 'cert', { minVersion: 'TLSv1.3' })),
      agent.getName(options('ca', 'cert', { maxVersion: 'TLSv1.2' })),
      agent.getName(options('ca', 'cert', { pfx: pem('pfx') })),
      agent.getName(options('ca', 'cert', { crl: pem('crl') })),
      agent.getName(options('ca', 'cert', { secureOptions: 4 })),
      agent.getName(options('ca', 'cert', { sigalgs: 'ecdsa_secp256r1_sha256' })),
    ];
    assert.equal(new Set(names).size, names.length, names.join('\n'));
    // The first credentials are still known: a request with them reuses their pool.
    assert.equal(agent.getName(options('ca', 'cert')), names[0]);
    agent.destroy();
  });

  it('compares credentials in arrays item by item, and any other kind of value by identity', () => {
    const agent = new KubeHttpsAgent();
    const twoCas = agent.getName({ ...options('ca', 'cert'), ca: [pem('ca'), pem('second ca')] });
    assert.equal(agent.getName({ ...options('ca', 'cert'), ca: [pem('ca'), pem('second ca')] }), twoCas);
    const others = [
      agent.getName({ ...options('ca', 'cert'), ca: [pem('ca'), pem('other second ca')] }),
      agent.getName({ ...options('ca', 'cert'), ca: [pem('ca')] }),
      // Longer than the one-item array known before it, which it begins with.
      agent.getName({ ...options('ca', 'cert'), ca: [pem('ca'), pem('third ca')] }),
      agent.getName({ ...options('ca', 'cert'), ca: undefined }),
    ];
    assert.equal(new Set([twoCas, ...others]).size, 5, [twoCas, ...others].join('\n'));

    // A key with its passphrase: the same object is the same key, an equal one is not known to be.
    const keyWithPassphrase = { pem: pem('key'), passphrase: 'secret' };
    const withPassphrase = agent.getName({ ...options('ca', 'cert'), key: [keyWithPassphrase] });
    assert.equal(agent.getName({ ...options('ca', 'cert'), key: [keyWithPassphrase] }), withPassphrase);
    const equalKey = agent.getName({ ...options('ca', 'cert'), key: [{ ...keyWithPassphrase }] });
    const pemKey = agent.getName({ ...options('ca', 'cert'), key: [pem('key')] });
    assert.equal(new Set([withPassphrase, equalKey, pemKey]).size, 3);
    agent.destroy();
  });

  it('remembers the last 16 credentials: older ones get a new pool when they come back', () => {
    const agent = new KubeHttpsAgent();
    const first = agent.getName(options('ca', 'cert 0'));
    for (let i = 1; i < 16; i++) agent.getName(options('ca', `cert ${String(i)}`));
    assert.equal(agent.getName(options('ca', 'cert 0')), first, 'the 16th credentials still know the first');
    agent.getName(options('ca', 'cert 16'));
    assert.notEqual(agent.getName(options('ca', 'cert 0')), first, 'the 17th pushed the first out');
    agent.destroy();
  });

  it('names the options it is given in place, without copying them', () => {
    // A copy per call costs microseconds, several times per request; Node never reads `method` to name a pool.
    const agent = new KubeHttpsAgent();
    let reads = 0;
    const given = options('ca', 'cert');
    Object.defineProperty(given, 'method', {
      enumerable: true,
      get: () => {
        reads += 1;
        return 'GET';
      },
    });
    assert.equal(agent.getName(given), agent.getName(options('ca', 'cert')));
    assert.equal(reads, 0);
    agent.destroy();
  });
});
