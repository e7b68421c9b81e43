/**
 * The releases the e2e run installs, published by its global setup with `pnpm release --local` into the
 * node's registry: the README's version (`current`) and the next patch release (`next`), the upgrade
 * every suite rolls its pods to. Handed to the test files in LOOPWRIGHT_E2E_RELEASES.
 */
import type { LocalRelease } from '@loopwright/cluster';
import type { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '@loopwright/client';
import { resource } from './kube.ts';
import { chartFromRegistry } from './readme-install.ts';
import { PODS } from './resources.ts';

const variable = 'LOOPWRIGHT_E2E_RELEASES';

export interface E2eReleases {
  /** `pnpm release --local`'s `--out`: each release's files in `<dir>/<tag>/`, release.json among them. */
  dir: string;
  /** The node's registry, `127.0.0.1:<port>`. */
  registry: string;
  current: string;
  next: string;
}

export function e2eReleasesExports(releases: E2eReleases): Record<string, string> {
  return { [variable]: JSON.stringify(releases) };
}

export function e2eReleases(): E2eReleases {
  const text = process.env[variable];
  if (!text) throw new Error(`${variable} is not set: run with the e2e global setup`);
  return JSON.parse(text) as E2eReleases;
}

/** What `pnpm release --local <tag>` reported it published (its release.json). */
export function publishedRelease(version: string): LocalRelease {
  const { dir } = e2eReleases();
  return JSON.parse(readFileSync(join(dir, `v${version}`, 'release.json'), 'utf8')) as LocalRelease;
}

/** `X.Y.(Z+1)`. */
export function nextPatch(version: string): string {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (!match) throw new Error(`${version} is not MAJOR.MINOR.PATCH`);
  return `${match[1]}.${match[2]}.${Number(match[3]) + 1}`;
}

/**
 * The chart of `version` from the node's registry, as `helm upgrade`/`install` arguments: the README's
 * chart reference (`readme.chart`) with its registry swapped for the node's, `--version`, and
 * `--plain-http` (that registry has no TLS).
 */
export function releasedChartArgs(readmeChart: string, version: string): string[] {
  const { registry } = e2eReleases();
  return [chartFromRegistry(readmeChart, registry), '--version', version, '--plain-http'];
}

interface PodImages extends KubeObject {
  spec: { containers: { name: string; image: string }[] };
  status: { containerStatuses?: { name: string; imageID: string }[] };
}

/**
 * The pod's controller container runs the image the release pushed for `version`, and the kubelet
 * reports the registry's digest for it: containerd pulled it from the node's registry (an imported
 * image would carry no repository digest of that registry).
 */
export async function assertRunsReleasedImage(
  admin: KubeConfig,
  namespace: string,
  pod: string,
  controller: string,
  version: string,
): Promise<void> {
  const published = publishedRelease(version).images.find((image) => image.controller === controller);
  assert.ok(published, `release ${version} published no image of ${controller}`);
  const { spec, status } = await resource<PodImages>(admin, PODS).get({ namespace, name: pod });
  assert.equal(spec.containers.find((c) => c.name === 'controller')?.image, published.reference);
  const repository = published.reference.slice(0, published.reference.lastIndexOf(':'));
  assert.equal(
    status.containerStatuses?.find((c) => c.name === 'controller')?.imageID,
    `${repository}@${published.digest}`,
  );
}
