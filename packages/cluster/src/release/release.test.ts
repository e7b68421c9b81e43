/**
 * The release's pure parts: the tag, the CHANGELOG section, clusterctl's metadata, the chart rewrite and
 * the SBOM's npm packages. The release itself runs in the e2e suites (e2e/src/release.e2e.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { artifactHubChanges, changelogSection } from './changelog.ts';
import { releaseChartFiles } from './charts.ts';
import { clusterctlMetadata } from './clusterctl.ts';
import { npmPackagesOf } from './images.ts';
import { parseReleaseTag } from './version.ts';

test('a release tag is vMAJOR.MINOR.PATCH (SemVer); the version drops the v', () => {
  assert.deepEqual(parseReleaseTag('v1.20.3'), {
    tag: 'v1.20.3',
    version: '1.20.3',
    major: 1,
    minor: 20,
    patch: 3,
  });
  assert.equal(parseReleaseTag('v0.2.0-rc.1').version, '0.2.0-rc.1');
  for (const tag of ['1.2.3', 'v1.2', 'v01.2.3', 'v1.2.3.4', 'v1.2.x', 'release-1.2.3', '', 'v1.2.3-'])
    assert.throws(() => parseReleaseTag(tag), /is not a release tag/, tag);
  // `+` cannot be in an OCI tag.
  assert.throws(() => parseReleaseTag('v1.2.3+build.5'), /build metadata/);
});

const changelog = `# Changelog

## [Unreleased]

### Added
- Next thing.

## [0.2.0] - 2026-12-01

### Fixed
- A bug.

## [0.1.0] - 2026-11-28

### Added
- Everything.

[Unreleased]: https://github.com/loopwright/loopwright/compare/v0.2.0...HEAD
[0.2.0]: https://github.com/loopwright/loopwright/compare/v0.1.0...v0.2.0
`;

test("the release notes are the CHANGELOG's section of the version, to the next heading or link list", () => {
  assert.equal(changelogSection(changelog, '0.2.0'), '### Fixed\n- A bug.');
  assert.equal(changelogSection(changelog, '0.1.0'), '### Added\n- Everything.');
  assert.equal(changelogSection(changelog, 'Unreleased'), '### Added\n- Next thing.');
  assert.throws(() => changelogSection(changelog, '0.3.0'), /no section "## \[0.3.0\]"/);
  // 0.1.0 must not match 0.1.00 or 0.1.0-rc.1's heading.
  assert.throws(() => changelogSection('## [0.1.0-rc.1]\n- x\n', '0.1.0'), /no section/);
  assert.throws(() => changelogSection('## [0.1.0] - 2026-11-28\n\n## [0.0.9]\n- x\n', '0.1.0'), /is empty/);
});

test("Artifact Hub's changes: one per top-level bullet, of its heading's kind, continuation lines joined", () => {
  const section = [
    'The first release.',
    '',
    '### Added',
    '',
    '- **cloud-node**: initialises Nodes,',
    '  and removes Nodes whose servers are gone.',
    '- LICENSE.',
    '',
    '### Notes',
    '',
    '- Not a change kind Artifact Hub knows.',
    '',
    '### Security',
    '* Tokens are redacted.',
    '### Changed',
    '- Charts share a library chart.',
    'A trailing paragraph.',
    '### Deprecated',
    '- WATCH_NAMESPACE.',
    '### Removed',
    '- Nothing.',
    '### Fixed',
    '- A bug.',
  ].join('\n');
  assert.deepEqual(artifactHubChanges(section), [
    {
      kind: 'added',
      description: '**cloud-node**: initialises Nodes, and removes Nodes whose servers are gone.',
    },
    { kind: 'added', description: 'LICENSE.' },
    { kind: 'security', description: 'Tokens are redacted.' },
    { kind: 'changed', description: 'Charts share a library chart.' },
    { kind: 'deprecated', description: 'WATCH_NAMESPACE.' },
    { kind: 'removed', description: 'Nothing.' },
    { kind: 'fixed', description: 'A bug.' },
  ]);
  assert.deepEqual(artifactHubChanges('Nothing yet.'), []);
});

test("clusterctl's metadata maps the release's series to the v1beta2 contract", () => {
  const metadata = parseYaml(clusterctlMetadata(parseReleaseTag('v1.4.2'))) as Record<string, unknown>;
  assert.deepEqual(metadata, {
    apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3',
    kind: 'Metadata',
    releaseSeries: [{ major: 1, minor: 4, contract: 'v1beta2' }],
  });
});

test("a release chart: version and appVersion are the release's, the image the release's, comments kept", () => {
  const chartYaml = `apiVersion: v2
name: at-scheduler
# The chart's own version.
version: 0.1.3
appVersion: '0.1.0'
annotations:
  artifacthub.io/images: |
    - name: at-scheduler
      image: ghcr.io/loopwright/at-scheduler:0.1.0
`;
  const valuesYaml = `image:
  # Where the image is pulled from.
  repository: ghcr.io/loopwright/at-scheduler
  tag: ''
replicaCount: 2
`;
  const released = releaseChartFiles(chartYaml, valuesYaml, {
    version: '1.2.3',
    imageRepository: '127.0.0.1:5000/fork/at-scheduler',
    notes: '### Fixed\n\n- **at-scheduler**: an At due during a roll runs once.',
  });
  const chart = parseYaml(released.chartYaml) as Record<string, unknown> & {
    annotations: Record<string, string>;
  };
  assert.equal(chart.version, '1.2.3');
  assert.equal(chart.appVersion, '1.2.3');
  assert.match(
    chart.annotations['artifacthub.io/images'] ?? '',
    /image: 127\.0\.0\.1:5000\/fork\/at-scheduler:1\.2\.3\n/,
  );
  assert.deepEqual(parseYaml(chart.annotations['artifacthub.io/changes'] ?? ''), [
    { kind: 'fixed', description: '**at-scheduler**: an At due during a roll runs once.' },
  ]);
  assert.match(released.chartYaml, /# The chart's own version\./);
  const values = parseYaml(released.valuesYaml) as { image: Record<string, string>; replicaCount: number };
  assert.deepEqual(values, {
    image: { repository: '127.0.0.1:5000/fork/at-scheduler', tag: '' },
    replicaCount: 2,
  });
  assert.match(released.valuesYaml, /# Where the image is pulled from\./);
  assert.throws(
    () =>
      releaseChartFiles(chartYaml, 'replicaCount: 2\n', {
        version: '1.2.3',
        imageRepository: 'r',
        notes: '',
      }),
    /no image\.repository/,
  );
});

test("the SBOM's npm packages are those with an npm purl, as name@version", () => {
  assert.deepEqual(
    npmPackagesOf({
      packages: [
        { name: 'yaml', versionInfo: '2.9.1', externalRefs: [{ referenceLocator: 'pkg:npm/yaml@2.9.1' }] },
        {
          name: 'libc6',
          versionInfo: '2.36',
          externalRefs: [{ referenceLocator: 'pkg:deb/debian/libc6@2.36' }],
        },
        {
          name: '@kubernetes/client-node',
          versionInfo: '2.0.1',
          externalRefs: [{ referenceLocator: 'pkg:npm/%40kubernetes/client-node@2.0.1' }],
        },
        { name: '/app', versionInfo: '' },
      ],
    }),
    ['@kubernetes/client-node@2.0.1', 'yaml@2.9.1'],
  );
});
