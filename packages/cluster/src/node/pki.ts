import { createCa, signCertificate } from '../openssl-ca.ts';

/** The node's certificates: the API server authenticates to the kubelet with a client certificate. */
export interface NodePki {
  caCertFile: string;
  kubeletClientCertFile: string;
  kubeletClientKeyFile: string;
}

/**
 * Generates a CA and the API server's kubelet-client certificate (group system:masters, so the
 * kubelet's webhook authorization allows logs and exec).
 */
export async function generateNodePki(dir: string): Promise<NodePki> {
  const ca = await createCa(dir, 'loopwright-node-ca');
  const client = await signCertificate(
    dir,
    'kubelet-client',
    '/O=system:masters/CN=kube-apiserver-kubelet-client',
  );
  return {
    caCertFile: ca.certFile,
    kubeletClientCertFile: client.certFile,
    kubeletClientKeyFile: client.keyFile,
  };
}
