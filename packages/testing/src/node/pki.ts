import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The node's certificates: the API server authenticates to the kubelet with a client certificate. */
export interface NodePki {
  caCertFile: string;
  kubeletClientCertFile: string;
  kubeletClientKeyFile: string;
}

/**
 * Generates a CA and the API server's kubelet-client certificate (group system:masters, so the
 * kubelet's webhook authorization allows logs and exec) with the openssl command: Node's crypto can
 * make keys but not certificates.
 */
export async function generateNodePki(dir: string): Promise<NodePki> {
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
    '/CN=loopwright-node-ca',
    '-days',
    '30',
    '-out',
    file('ca.crt'),
  );
  await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('kubelet-client.key'));
  await openssl(
    'req',
    '-new',
    '-key',
    file('kubelet-client.key'),
    '-subj',
    '/O=system:masters/CN=kube-apiserver-kubelet-client',
    '-out',
    file('kubelet-client.csr'),
  );
  await openssl(
    'x509',
    '-req',
    '-in',
    file('kubelet-client.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '30',
    '-out',
    file('kubelet-client.crt'),
  );
  return {
    caCertFile: file('ca.crt'),
    kubeletClientCertFile: file('kubelet-client.crt'),
    kubeletClientKeyFile: file('kubelet-client.key'),
  };
}
