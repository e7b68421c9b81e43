/**
 * What `pnpm release --local` published into the node's registry (the global setup ran it for the
 * README's version and the next patch release), checked from the registry with the tools a user
 * verifies a release with: each image is signed (cosign verifies it with the release's key and refuses
 * another key), carries a syft SBOM as a signed attestation that lists every npm package the image's
 * bundle holds, at its version; each chart installs that release's image; the release's assets are what
 * clusterctl reads. The installs from these charts and the upgrades between the two releases are the
 * controllers' own suites (`<controller>.e2e.test.ts`).
 */
import {
  artifactHubChanges,
  ensureReleaseTools,
  helm,
  releaseNotes,
  verifiedSbomAttestations,
  verifyImage,
  workspaceControllers,
  type LocalRelease,
  type ReleaseTools,
} from '@loopwright/cluster';
import { ensureTestTools } from '@loopwright/envtest';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { readmeInstall } from './readme-install.ts';
import { e2eReleases, publishedRelease } from './release.ts';

const run = promisify(execFile);
const controllers = workspaceControllers().map(({ name }) => name);

interface SpdxPackage {
  name: string;
  versionInfo?: string;
  externalRefs?: { referenceLocator?: string }[];
}

/** The attested SBOM of `image`, as `cosign verify-attestation` returns it (in-toto, base64 payload). */
async function attestedSbom(
  tools: ReleaseTools,
  release: LocalRelease,
  image: string,
): Promise<SpdxPackage[]> {
  const stdout = await verifiedSbomAttestations(tools, release.publicKeyPath, image, true);
  const [envelope] = stdout.trim().split('\n');
  assert.ok(envelope, `no attestation for ${image}`);
  const statement = JSON.parse(
    Buffer.from((JSON.parse(envelope) as { payload: string }).payload, 'base64').toString('utf8'),
  ) as { predicateType: string; predicate: { packages: SpdxPackage[] } };
  assert.equal(statement.predicateType, 'https://spdx.dev/Document');
  return statement.predicate.packages;
}

/** The npm packages in the image's own bundle manifest (`/app/package-lock.json`), read from the registry. */
async function bundledPackages(tools: ReleaseTools, image: string, scratch: string): Promise<string[]> {
  const tarPath = join(scratch, 'filesystem.tar');
  await run(tools.crane, ['export', '--insecure', image, tarPath], { maxBuffer: 16 * 1024 * 1024 });
  await run('tar', ['-xf', tarPath, '-C', scratch, 'app/package-lock.json']);
  const lock = JSON.parse(await readFile(join(scratch, 'app', 'package-lock.json'), 'utf8')) as {
    name: string;
    packages: Record<string, { version: string }>;
  };
  return Object.entries(lock.packages).map(([path, { version }]) => {
    const name =
      path === '' ? lock.name : path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    return `${name}@${version}`;
  });
}

describe('the local release: signed images with SBOMs, charts and assets in the node registry', () => {
  const { registry, current, next } = e2eReleases();
  let tools: ReleaseTools;
  let scratch: string;
  let otherKey: string;

  before(async () => {
    tools = await ensureReleaseTools();
    scratch = await mkdtemp(join(tmpdir(), 'loopwright-release-e2e-'));
    // A key pair that signed nothing: verifying with it must fail.
    await run(tools.cosign, ['generate-key-pair'], {
      cwd: scratch,
      env: { ...process.env, COSIGN_PASSWORD: '' },
    });
    otherKey = join(scratch, 'cosign.pub');
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  test('the registry serves the distribution API and holds each controller’s image and chart', async () => {
    const response = await fetch(`http://${registry}/v2/_catalog`);
    assert.equal(response.status, 200);
    const { repositories } = (await response.json()) as { repositories: string[] };
    for (const controller of controllers) {
      assert.ok(repositories.includes(`loopwright/${controller}`), JSON.stringify(repositories));
      assert.ok(repositories.includes(`loopwright/charts/${controller}`), JSON.stringify(repositories));
      const { stdout } = await run(tools.crane, ['ls', '--insecure', `${registry}/loopwright/${controller}`]);
      const tags = stdout.trim().split('\n');
      assert.ok(tags.includes(current) && tags.includes(next), tags.join(' '));
    }
  });

  for (const version of [current, next])
    test(`v${version}: every image is signed; cosign verifies it with the release key and refuses another`, async () => {
      const release = publishedRelease(version);
      assert.deepEqual(release.images.map((image) => image.controller).sort(), [...controllers].sort());
      for (const image of release.images) {
        assert.equal(image.reference, `${registry}/loopwright/${image.controller}:${version}`);
        const pinned = `${image.reference.slice(0, image.reference.lastIndexOf(':'))}@${image.digest}`;
        const { stdout: digest } = await run(tools.crane, ['digest', '--insecure', image.reference]);
        assert.equal(digest.trim(), image.digest, 'the tag names the signed manifest');
        await verifyImage(tools, release.publicKeyPath, pinned, true);
        await assert.rejects(verifyImage(tools, otherKey, pinned, true), /signature|no matching/i);
      }
    });

  test(`v${current}: each SBOM, attested and signed, lists every npm package of the image’s bundle at its version`, async () => {
    const release = publishedRelease(current);
    for (const image of release.images) {
      const pinned = `${image.reference.slice(0, image.reference.lastIndexOf(':'))}@${image.digest}`;
      const sbom = await attestedSbom(tools, release, pinned);
      const listed = new Set(
        sbom
          .filter((pkg) => pkg.externalRefs?.some((ref) => ref.referenceLocator?.startsWith('pkg:npm/')))
          .map((pkg) => `${pkg.name}@${pkg.versionInfo ?? ''}`),
      );
      const bundled = await bundledPackages(tools, pinned, await mkdtemp(join(scratch, image.controller)));
      assert.ok(bundled.length > 20, `${image.controller}: ${bundled.length} bundled packages`);
      assert.deepEqual(
        bundled.filter((pkg) => !listed.has(pkg)),
        [],
        `${image.controller}: bundled packages missing from the SBOM`,
      );
      assert.ok(listed.has(`@loopwright/${image.controller}@${await readPackageVersion(image.controller)}`));
    }
  });

  test(`v${current}: each chart carries the release’s version, its CHANGELOG changes for Artifact Hub, and installs the release’s image`, async () => {
    const changes = artifactHubChanges(await releaseNotes(current, 'Unreleased'));
    assert.ok(changes.length > 0, `the CHANGELOG section of ${current} lists changes`);
    for (const controller of controllers) {
      const chart = [
        `oci://${registry}/loopwright/charts/${controller}`,
        '--version',
        current,
        '--plain-http',
      ];
      const shown = parseYaml((await helm(['show', 'chart', ...chart])).stdout) as {
        version: string;
        appVersion: string;
        annotations: Record<string, string>;
      };
      assert.equal(shown.version, current);
      assert.equal(shown.appVersion, current);
      assert.deepEqual(parseYaml(shown.annotations['artifacthub.io/changes'] ?? ''), changes);
      const { stdout } = await helm([
        'template',
        controller,
        ...chart,
        '--namespace',
        'ns',
        // mailgun-cluster's install requires Cluster API's types; `helm template` has no cluster to ask.
        '--api-versions',
        'cluster.x-k8s.io/v1beta2',
        ...requiredValues(controller),
      ]);
      const images = parseAllDocuments(stdout)
        .map(
          (document) =>
            document.toJS() as {
              kind?: string;
              spec?: { template?: { spec?: { containers?: { image: string }[] } } };
            } | null,
        )
        .filter((object) => object?.kind === 'Deployment')
        .flatMap((deployment) => deployment?.spec?.template?.spec?.containers?.map((c) => c.image) ?? []);
      assert.deepEqual(images, [`${registry}/loopwright/${controller}:${current}`]);
    }
  });

  test(`v${current}: the GitHub release's assets: CRDs, clusterctl's provider files mapping the series to v1beta2, notes`, async () => {
    const release = publishedRelease(current);
    const asset = (name: string) => readFile(join(release.assets.dir, name), 'utf8');
    for (const controller of workspaceControllers().filter((c) => c.crdFiles.length > 0)) {
      const crds = parseAllDocuments(await asset(`${controller.name}-crds.yaml`)).map(
        (d) => d.toJS() as { kind: string },
      );
      assert.equal(crds.length, controller.crdFiles.length);
      assert.ok(crds.every((crd) => crd.kind === 'CustomResourceDefinition'));
    }
    const metadata = parseYaml(await asset('metadata.yaml')) as {
      kind: string;
      releaseSeries: { major: number; minor: number; contract: string }[];
    };
    const [major, minor] = current.split('.').map(Number);
    assert.equal(metadata.kind, 'Metadata');
    assert.deepEqual(metadata.releaseSeries, [{ major, minor, contract: 'v1beta2' }]);
    const components = parseAllDocuments(await asset('infrastructure-components.yaml')).map(
      (d) => d.toJS() as { kind: string; metadata: { namespace?: string; labels?: Record<string, string> } },
    );
    for (const object of components) {
      assert.equal(
        object.metadata.labels?.['cluster.x-k8s.io/provider'],
        'infrastructure-mailgun',
        object.kind,
      );
      if (
        !['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding'].includes(object.kind)
      )
        assert.equal(object.metadata.namespace, 'mailgun-system', object.kind);
    }
    const text = await asset('infrastructure-components.yaml');
    for (const variable of ['${MAILGUN_DOMAIN}', '${MAIL_RECIPIENT}', '${MAILGUN_API_KEY}'])
      assert.ok(text.includes(variable), variable);
    assert.ok(text.includes(`${registry}/loopwright/mailgun-cluster:${current}`));
    assert.notEqual((await asset('release-notes.md')).trim(), '');
  });

  test(`v${current}: clusterctl reads the release's provider repository: contract, variables, images`, async () => {
    const release = publishedRelease(current);
    const clusterctl = (await ensureTestTools()).clusterctl;
    const provider = [
      'generate',
      'provider',
      '--infrastructure',
      `mailgun:v${current}`,
      '--config',
      release.clusterctlConfigPath,
    ];
    const described = await run(clusterctl, [...provider, '--describe'], {
      env: { ...process.env, HOME: scratch },
    });
    assert.match(described.stdout, new RegExp(`Version:\\s+v${current.replaceAll('.', '\\.')}`));
    assert.match(described.stdout, /TargetNamespace:\s+mailgun-system/);
    const variables = /Variables:\n((?:\s+- .*\n)+)/.exec(described.stdout)?.[1]?.match(/[A-Z_]+/g);
    assert.deepEqual(variables, ['MAILGUN_API_KEY', 'MAILGUN_DOMAIN', 'MAILGUN_URL', 'MAIL_RECIPIENT']);
    assert.match(described.stdout, new RegExp(`- ${registry}/loopwright/mailgun-cluster:${current}`));
    // Without a variable clusterctl refuses, naming it; with them it substitutes every one.
    await assert.rejects(
      run(clusterctl, provider, { env: { ...process.env, HOME: scratch, MAILGUN_DOMAIN: 'mg.example.com' } }),
      /MAIL(GUN_API_KEY|_RECIPIENT)/,
    );
    const { stdout } = await run(clusterctl, provider, {
      env: {
        ...process.env,
        HOME: scratch,
        MAILGUN_DOMAIN: 'mg.example.com',
        MAIL_RECIPIENT: 'ops@example.com',
        MAILGUN_API_KEY: 'key-e2e',
      },
      maxBuffer: 16 * 1024 * 1024,
    });
    assert.ok(!stdout.includes('${'), 'a variable left unsubstituted');
    const objects = parseAllDocuments(stdout).map(
      (d) =>
        d.toJS() as { kind: string; stringData?: Record<string, string>; metadata: { namespace?: string } },
    );
    assert.deepEqual(objects.find((object) => object.kind === 'Secret')?.stringData, {
      'api-key': 'key-e2e',
    });
    assert.ok(stdout.includes('value: https://api.mailgun.net'), 'MAILGUN_URL defaults to Mailgun’s API');
  });
});

async function readPackageVersion(controller: string): Promise<string> {
  const manifest = JSON.parse(
    await readFile(new URL(`../../packages/${controller}/package.json`, import.meta.url), 'utf8'),
  ) as { version: string };
  return manifest.version;
}

/** The README's values for the chart (those a chart refuses to render without among them). */
function requiredValues(controller: string): string[] {
  return Object.entries(readmeInstall(controller).values).flatMap(([key, value]) => [
    '--set',
    `${key}=${value}`,
  ]);
}
