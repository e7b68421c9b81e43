/**
 * A throwaway certificate authority with the openssl command (Node's crypto can make keys but not
 * certificates): P-256 keys, certificates valid for 30 days, files named after their role in `dir`.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const openssl = async (...args: string[]): Promise<void> => {
  await run('openssl', args);
};

/** Writes `<dir>/ca.key` and `<dir>/ca.crt`, a self-signed CA named `commonName`. */
export async function createCa(
  dir: string,
  commonName: string,
): Promise<{ keyFile: string; certFile: string }> {
  const keyFile = join(dir, 'ca.key');
  const certFile = join(dir, 'ca.crt');
  await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', keyFile);
  await openssl(
    'req',
    '-x509',
    '-new',
    '-key',
    keyFile,
    '-subj',
    `/CN=${commonName}`,
    '-days',
    '30',
    '-out',
    certFile,
  );
  return { keyFile, certFile };
}

/**
 * Writes `<dir>/<name>.key` and `<dir>/<name>.crt` for `subject` (`/O=group/CN=user`), signed by the CA
 * of {@link createCa} in the same `dir`; `extensions` (openssl `-extfile` lines) add e.g.
 * `subjectAltName=IP:127.0.0.1`.
 */
export async function signCertificate(
  dir: string,
  name: string,
  subject: string,
  extensions: readonly string[] = [],
): Promise<{ keyFile: string; certFile: string }> {
  const file = (suffix: string): string => join(dir, `${name}.${suffix}`);
  await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('key'));
  await openssl('req', '-new', '-key', file('key'), '-subj', subject, '-out', file('csr'));
  const extfile = extensions.length === 0 ? [] : ['-extfile', file('ext')];
  if (extensions.length > 0) await writeFile(file('ext'), `${extensions.join('\n')}\n`);
  await openssl(
    'x509',
    '-req',
    '-in',
    file('csr'),
    '-CA',
    join(dir, 'ca.crt'),
    '-CAkey',
    join(dir, 'ca.key'),
    '-CAcreateserial',
    '-days',
    '30',
    ...extfile,
    '-out',
    file('crt'),
  );
  return { keyFile: file('key'), certFile: file('crt') };
}
