/**
 * Signatures with cosign. The release workflow signs keyless (GitHub's OIDC token, Fulcio, Rekor); none
 * of those services is reachable from a machine without internet, so a local release signs with a key
 * pair of its own and no transparency log: the same signature and attestation formats in the same
 * registry, verified with `cosign verify --key`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ReleaseTools } from '../tools/release-tools.ts';

const run = promisify(execFile);

export interface SigningKey {
  privateKeyPath: string;
  publicKeyPath: string;
  /** A signing config without transparency log or timestamp authority (cosign v3's way to say offline). */
  signingConfigPath: string;
}

/**
 * cosign's environment: the key's password (empty: the key never leaves the release's directory), and
 * no update check or TUF refresh that would wait on an unreachable network.
 */
function cosignEnv(): NodeJS.ProcessEnv {
  return { ...process.env, COSIGN_PASSWORD: '', COSIGN_YES: 'true', TUF_ROOT: '' };
}

/** The key pair in `dir` (`cosign.key`, `cosign.pub`), generated on first use. */
export async function localSigningKey(tools: ReleaseTools, dir: string): Promise<SigningKey> {
  await mkdir(dir, { recursive: true });
  const key: SigningKey = {
    privateKeyPath: join(dir, 'cosign.key'),
    publicKeyPath: join(dir, 'cosign.pub'),
    signingConfigPath: join(dir, 'signing-config.json'),
  };
  if (!existsSync(key.privateKeyPath) || !existsSync(key.publicKeyPath)) {
    await run(tools.cosign, ['generate-key-pair'], { cwd: dir, env: cosignEnv() });
  }
  await writeFile(
    key.signingConfigPath,
    JSON.stringify({
      mediaType: 'application/vnd.dev.sigstore.signingconfig.v0.2+json',
      rekorTlogConfig: {},
      tsaConfig: {},
    }),
  );
  return key;
}

function registryFlags(plainHttp: boolean): string[] {
  return plainHttp ? ['--allow-http-registry', '--allow-insecure-registry'] : [];
}

/** cosign with `args`; its standard output. */
async function cosign(tools: ReleaseTools, args: string[]): Promise<string> {
  const { stdout } = await run(tools.cosign, args, { env: cosignEnv(), maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** What signs with the local key: the key, and the signing config that writes no transparency log. */
function signingFlags(key: SigningKey, plainHttp: boolean): string[] {
  return [
    '--key',
    key.privateKeyPath,
    '--signing-config',
    key.signingConfigPath,
    '--yes',
    ...registryFlags(plainHttp),
  ];
}

/** What verifies with the public key; no transparency log was written, so none is read. */
function verifyingFlags(publicKeyPath: string, plainHttp: boolean): string[] {
  return ['--key', publicKeyPath, '--insecure-ignore-tlog', ...registryFlags(plainHttp)];
}

/** Signs `image` (`repository@sha256:...`: a signature names a digest, never a tag). */
export async function signImage(
  tools: ReleaseTools,
  key: SigningKey,
  image: string,
  plainHttp: boolean,
): Promise<void> {
  await cosign(tools, ['sign', ...signingFlags(key, plainHttp), image]);
}

/** Attaches `predicatePath` (an SBOM: type `spdxjson`) to `image` as a signed in-toto attestation. */
export async function attestImage(
  tools: ReleaseTools,
  key: SigningKey,
  image: string,
  predicatePath: string,
  type: string,
  plainHttp: boolean,
): Promise<void> {
  await cosign(tools, [
    'attest',
    ...signingFlags(key, plainHttp),
    '--type',
    type,
    '--predicate',
    predicatePath,
    image,
  ]);
}

/**
 * `cosign verify-attestation` of the SBOM with the public key: the verified attestations (in-toto
 * envelopes, one JSON per line). Rejects with cosign's own message when none verifies.
 */
export async function verifiedSbomAttestations(
  tools: ReleaseTools,
  publicKeyPath: string,
  image: string,
  plainHttp: boolean,
): Promise<string> {
  return cosign(tools, [
    'verify-attestation',
    ...verifyingFlags(publicKeyPath, plainHttp),
    '--type',
    'spdxjson',
    image,
  ]);
}

/**
 * `cosign verify` and `verify-attestation` of the SBOM with the public key: resolves when both verify,
 * rejects with cosign's own message otherwise.
 */
export async function verifyImage(
  tools: ReleaseTools,
  publicKeyPath: string,
  image: string,
  plainHttp: boolean,
): Promise<void> {
  await cosign(tools, ['verify', ...verifyingFlags(publicKeyPath, plainHttp), image]);
  await verifiedSbomAttestations(tools, publicKeyPath, image, plainHttp);
}
