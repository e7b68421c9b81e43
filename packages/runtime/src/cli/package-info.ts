import { readFileSync } from 'node:fs';

export interface PackageInfo {
  /** The package name without its scope: `@loopwright/cloud-node` -> `cloud-node`. */
  name: string;
  version: string;
  description: string;
}

/** Reads a package.json; throws when it lacks a name or version (a broken build, not a user error). */
export function readPackageInfo(packageJson: URL): PackageInfo {
  const manifest = JSON.parse(readFileSync(packageJson, 'utf8')) as Record<string, unknown>;
  const { name, version, description } = manifest;
  if (typeof name !== 'string' || typeof version !== 'string' || name === '' || version === '')
    throw new Error(`${packageJson.pathname}: expected a package.json with a name and a version`);
  return {
    name: name.replace(/^@[^/]+\//, ''),
    version,
    description: typeof description === 'string' ? description : '',
  };
}
