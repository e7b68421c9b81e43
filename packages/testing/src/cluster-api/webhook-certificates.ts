import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What a webhook server on the loopback needs, and what the API server needs to trust it. */
export interface WebhookCertificates {
  /** Holds `tls.crt` and `tls.key`, the file names controller-runtime's webhook server reads by default. */
  certDir: string;
  /** The CA's PEM, base64-encoded: a webhook `clientConfig.caBundle`. */
  caBundle: string;
}

/**
 * Generates a CA and a serving certificate for 127.0.0.1 signed by it, the way envtest does for a
 * webhook server outside the cluster (cert-manager's job in a real installation), with the openssl
 * command: Node's crypto can make keys but not certificates.
 */
export async function generateWebhookCertificates(dir: string): Promise<WebhookCertificates> {
  const file = (name: string): string => join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args);
  await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('ca.key'));
  await openssl(
    'req',
    '-x509',
    '-new',
    '-key',
    file('ca.key'),
    '-subj',
    '/CN=loopwright-cluster-api-webhook-ca',
    '-days',
    '30',
    '-out',
    file('ca.crt'),
  );
  await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('tls.key'));
  await openssl('req', '-new', '-key', file('tls.key'), '-subj', '/CN=127.0.0.1', '-out', file('tls.csr'));
  // The API server checks the address it dials against the subject alternative names, not the CN.
  await writeFile(file('tls.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  await openssl(
    'x509',
    '-req',
    '-in',
    file('tls.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '30',
    '-extfile',
    file('tls.ext'),
    '-out',
    file('tls.crt'),
  );
  return { certDir: dir, caBundle: (await readFile(file('ca.crt'))).toString('base64') };
}
