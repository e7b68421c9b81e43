import { readFile } from 'node:fs/promises';
import { createCa, signCertificate } from '../openssl-ca.ts';

/** What a webhook server on the loopback needs, and what the API server needs to trust it. */
export interface WebhookCertificates {
  /** Holds `tls.crt` and `tls.key`, the file names controller-runtime's webhook server reads by default. */
  certDir: string;
  /** The CA's PEM, base64-encoded: a webhook `clientConfig.caBundle`. */
  caBundle: string;
}

/**
 * Generates a CA and a serving certificate for 127.0.0.1 signed by it, the way envtest does for a
 * webhook server outside the cluster (cert-manager's job in a real installation).
 */
export async function generateWebhookCertificates(dir: string): Promise<WebhookCertificates> {
  const ca = await createCa(dir, 'loopwright-cluster-api-webhook-ca');
  // The API server checks the address it dials against the subject alternative names, not the CN.
  await signCertificate(dir, 'tls', '/CN=127.0.0.1', [
    'subjectAltName=IP:127.0.0.1',
    'extendedKeyUsage=serverAuth',
  ]);
  return { certDir: dir, caBundle: (await readFile(ca.certFile)).toString('base64') };
}
