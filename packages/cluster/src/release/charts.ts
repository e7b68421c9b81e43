/**
 * A controller's release chart: the chart as the repository has it, with `version` and `appVersion` set
 * to the release's, `image.repository` to where the release pushed its image and Artifact Hub's changes
 * to the release's CHANGELOG section, packaged by helm (the library chart it depends on included) and
 * pushed with `helm push` to `oci://<registry>/<owner>/charts`.
 * A fork that releases to its own registry thus gets charts that pull its own images.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { helm } from '../helm/run.ts';
import { artifactHubChanges } from './changelog.ts';
import { repositoryRoot } from '../workspace/repository-root.ts';

export interface ReleaseChartOptions {
  controller: string;
  version: string;
  /** Where the release pushed the controller's image, e.g. `ghcr.io/loopwright/at-scheduler`. */
  imageRepository: string;
  /** The release's CHANGELOG section (releaseNotes): the chart's Artifact Hub changes. */
  notes: string;
  outDir: string;
}

/** Rewrites a chart's Chart.yaml and values.yaml text for a release; comments are kept. */
export function releaseChartFiles(
  chartYaml: string,
  valuesYaml: string,
  { version, imageRepository, notes }: Pick<ReleaseChartOptions, 'version' | 'imageRepository' | 'notes'>,
): { chartYaml: string; valuesYaml: string } {
  const chart = parseDocument(chartYaml);
  const values = parseDocument(valuesYaml);
  const previousRepository = values.getIn(['image', 'repository']);
  const previousAppVersion = chart.get('appVersion');
  if (typeof previousRepository !== 'string') throw new Error('values.yaml has no image.repository');
  chart.set('version', version);
  chart.set('appVersion', version);
  values.setIn(['image', 'repository'], imageRepository);
  // Artifact Hub lists the images a chart runs: the released one, not the repository's default.
  const images = chart.getIn(['annotations', 'artifacthub.io/images']);
  if (typeof images === 'string' && typeof previousAppVersion === 'string') {
    chart.setIn(
      ['annotations', 'artifacthub.io/images'],
      images.replaceAll(`${previousRepository}:${previousAppVersion}`, `${imageRepository}:${version}`),
    );
  }
  // Artifact Hub shows a chart version's changes from this annotation: the release's CHANGELOG section.
  const changes = artifactHubChanges(notes);
  if (changes.length > 0) chart.setIn(['annotations', 'artifacthub.io/changes'], stringify(changes));
  return { chartYaml: chart.toString(), valuesYaml: values.toString() };
}

/** Packages the release chart; returns the path of `<controller>-<version>.tgz` in `outDir`. */
export async function packageReleaseChart(options: ReleaseChartOptions): Promise<string> {
  // The whole charts/ directory, symlinks followed: the library chart (charts/<c>/charts/loopwright-controller,
  // a symlink into charts/) becomes a directory of the copy, which `helm package` stores in the package.
  const scratch = await mkdtemp(join(tmpdir(), 'loopwright-release-chart-'));
  try {
    await cp(join(repositoryRoot, 'charts'), join(scratch, 'charts'), { recursive: true, dereference: true });
    const chartDir = join(scratch, 'charts', options.controller);
    const released = releaseChartFiles(
      await readFile(join(chartDir, 'Chart.yaml'), 'utf8'),
      await readFile(join(chartDir, 'values.yaml'), 'utf8'),
      options,
    );
    await writeFile(join(chartDir, 'Chart.yaml'), released.chartYaml);
    await writeFile(join(chartDir, 'values.yaml'), released.valuesYaml);
    await helm(['package', chartDir, '--destination', options.outDir]);
    return join(options.outDir, `${options.controller}-${options.version}.tgz`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** `helm push` to `oci://<registryAndOwner>/charts`; returns the chart's digest. */
export async function pushChart(
  packagePath: string,
  registryAndOwner: string,
  plainHttp: boolean,
): Promise<string> {
  const { stdout, stderr } = await helm([
    'push',
    packagePath,
    `oci://${registryAndOwner}/charts`,
    ...(plainHttp ? ['--plain-http'] : []),
  ]);
  const digest = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(`${stdout}\n${stderr}`)?.[1];
  if (!digest) throw new Error(`helm push ${packagePath}: no digest in its output:\n${stdout}${stderr}`);
  return digest;
}
